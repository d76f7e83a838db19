"""The fuzzer's command line: run N programs, print what disagrees, by category and by op.

    python -m tests.fuzz.report 3000 [--start S] [--no-minimise] [--show]

Prints counts per mismatch category and per (category, op), a few seeds for each, one
minimised example program per category (runnable: ``import torch`` on top), and which of
ember's registered differentiable ops the programs built no node of (what to add to
``optable.TABLE``). One seed's program: ``EMBER_FUZZ_SEEDS=S-S+1 python -m pytest
tests/fuzz`` or ``python -m tests.fuzz.report 1 --start S --show``.
"""
from __future__ import annotations

import argparse
import collections
import sys
import time

from .generator import generate
from .runner import CATEGORIES, COSMETIC, SOFT, minimise, run

BACKWARD_OPS = ("backward", "autograd", "hvp")


def _forward_ops(program):
    """The op-table entries of the forward lines of a (minimised) program, in order."""
    return "+".join(dict.fromkeys(s.op for s in program.stmts if s.stage == "op")) or "-"


def _soft(cat):
    return cat in SOFT or cat.endswith("(known)")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz.report", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", type=int, help="how many programs (seeds start..start+n-1)")
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--no-minimise", action="store_true",
                    help="minimise only one example per category (faster)")
    ap.add_argument("--show", action="store_true", help="print every program and its result")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    by_cat = collections.Counter()
    by_op = collections.Counter()
    by_culprit = collections.Counter()
    cosmetic = collections.Counter()
    seeds = collections.defaultdict(list)
    examples = {}  # category -> (length of its source, minimised program, mismatch): shortest
    seen = set()
    ok = both_raised = lines = 0
    for seed in range(args.start, args.start + args.n):
        program = generate(seed)
        res = run(program, seen=seen)
        lines += res.lines_run
        m = res.mismatch
        for c in res.cosmetic:
            cosmetic[c.category, c.op] += 1
        if args.show:
            print(m.source(program) if m else program.source())
            print("#", "both raised: " + res.error if res.both_raised else "agree" if not m
                  else "", "\n")
        if m is None:
            ok += 1
            both_raised += res.both_raised
            continue
        cat = m.category + (" (known)" if m.known else "")  # see known.py
        by_cat[cat] += 1
        by_op[cat, m.op] += 1
        seeds[cat, m.op].append(seed)
        if args.no_minimise and cat in examples:
            continue
        small, sm = minimise(program, m)
        if m.op.startswith(BACKWARD_OPS):
            by_culprit[m.category, _forward_ops(small)] += 1
        best = examples.get(cat)
        size = len(sm.source(small))
        if best is None or size < best[0]:
            examples[cat] = (size, small, sm)
    elapsed = time.perf_counter() - t0

    n = args.n
    bad = sum(by_cat.values())
    print(f"{n} programs (seeds {args.start}..{args.start + n - 1}), {lines} lines run, "
          f"{elapsed:.1f}s: {ok} agree ({both_raised} of them end in the same error), "
          f"{bad} mismatch ({sum(v for k, v in by_cat.items() if _soft(k))} soft or known)\n")
    print("== mismatches per category (first mismatch of each program)")
    for cat, c in by_cat.most_common():
        print(f"{c:6d}  {cat:24s} {CATEGORIES.get(cat.split()[0], '')}"
              f"{' [soft]' if cat in SOFT else ''}")
    print("\n== per (category, op): op = the op-table entry of the line where it showed")
    for (cat, op), c in sorted(by_op.items(), key=lambda kv: (-kv[1], kv[0])):
        s = seeds[cat, op]
        print(f"{c:6d}  {cat:24s} {op:22s} seeds {', '.join(map(str, s[:6]))}"
              f"{' ...' if len(s) > 6 else ''}")
    if cosmetic:
        print(f"\n== cosmetic mismatches ({', '.join(sorted(COSMETIC))}) noted on the way, "
              "including those followed by a worse one (which is what the tables above count)")
        for (cat, op), c in sorted(cosmetic.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"{c:6d}  {cat:24s} {op}")
    if by_culprit:
        print("\n== backward-stage mismatches by the forward ops left after minimising")
        for (cat, ops), c in sorted(by_culprit.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"{c:6d}  {cat:24s} {ops}")
    print("\n== one minimised example per category")
    for cat, _ in by_cat.most_common():
        _, small, sm = examples[cat]
        print(f"\n# ---- {cat} (seed {small.seed}, op {sm.op})")
        print(sm.source(small), end="")
    _coverage(seen)
    return 0


def _coverage(seen):
    """Which of ember's registered differentiable ops no program built a node of."""
    try:
        from ember.ops import registry
    except ImportError:
        return
    ops = {op.node_cls.__name__ for op in registry.OPS if getattr(op, "rules", None)}
    missing = sorted(ops - seen)
    print(f"\n== coverage: the programs built nodes of {len(ops & seen)} of ember's "
          f"{len(ops)} registered differentiable ops; none of:")
    print("  " + ", ".join(missing))


if __name__ == "__main__":
    sys.exit(main())
