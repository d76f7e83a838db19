"""Every op against PyTorch, one at a time: forward + backward of each row of the tests' spec
tables, in float32, at a small and a large size, interleaved with PyTorch, medians.

    python bench/ops.py [--size small,large] [--only gelu,erf] [--repeat R] [--json PATH]

A spec (``tests/opspec.py``) is a function of a few tensors with the shapes it is tested at.
Here each spec's largest case is scaled to about ``--small`` (1K) and ``--large`` (1M)
elements: every dim longer than one is stretched by the same factor, so dims that are equal
stay equal and the shapes still broadcast and multiply. A spec whose function fixes a shape
of its own (a ``view(3, 2)``, a layer norm's ``normalized_shape``, a conv's weight, a weight
per class) grows only the dims that can: the largest set of dims that still runs when each
is doubled and tripled, multiplied by one integer (so a channel count stays divisible by its
groups); the row lists them as ``grown``. (A spec whose function fixes every dim — data of
its own, the ``*_at_kinks`` — is listed as skipped.) An op whose output outgrows its inputs
— ``diag_embed``, ``kron`` — gets inputs small enough that its output holds about as many
elements. The step is the spec's function, a weighted sum of its float outputs, and
``backward()``; before timing, ember's outputs and gradients are compared with PyTorch's (a
disagreement is reported, not timed).
The table is sorted by the ratio ember/PyTorch, worst first, and ends with the median ratio
and the ops over 2x at the large size. All libraries run on ``--threads`` threads (default 1).
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import resource
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SIZES = {"small": 1_000, "large": 1_000_000}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=lambda s: s.split(","), default=list(SIZES),
                        help="small, large or both (default)")
    parser.add_argument("--only", type=lambda s: set(s.split(",")), default=None,
                        help="comma-separated spec names (default: every spec)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--min-time", type=float, default=0.02,
                        help="seconds each timing sample lasts at least (default 0.02)")
    parser.add_argument("--json", metavar="PATH",
                        help="also write the results as JSON (after every spec: a run cut "
                             "short keeps what it measured)")
    parser.add_argument("--memory-gb", type=float, default=8.0,
                        help="address-space cap: an op that would need more raises (and is "
                             "listed as not timed) instead of exhausting the machine")
    args = parser.parse_args(argv)
    args.no_torch = False
    return args


def specs():
    """Every spec of the tests' tables, once per name (the first table's)."""
    from tests.ops.test_core_ops import all_specs

    seen = {}
    for spec in all_specs():
        seen.setdefault(spec.name, spec)
    return list(seen.values())


def _largest_case(spec):
    return max(spec.shapes, key=lambda shapes: sum(math.prod(s) for s in shapes))


def _long_dims(spec):
    """The dims longer than one of the spec's largest case and of its int inputs' shapes."""
    long = {d for shape in _largest_case(spec) for d in shape if d > 1}
    for shape, _ in spec.int_args.values():
        long |= {d for d in shape if d > 1}
    return long


def _stretched(spec, long, factor, whole):
    """The largest case (and int inputs' shapes) with the dims in ``long`` times ``factor``:
    rounded (``whole`` False), or multiplied by an integer factor (``whole`` True)."""
    size = {d: d * factor if whole else max(d, round(d * factor)) for d in long}
    shapes = tuple(tuple(size.get(d, d) for d in shape) for shape in _largest_case(spec))
    int_args = {k: (tuple(size.get(d, d) for d in shape), top)
                for k, (shape, top) in spec.int_args.items()}
    return shapes, int_args


def scaled(spec, target, plan=None):
    """The spec's largest case stretched to hold about ``target`` elements, int inputs'
    shapes likewise. With no ``plan`` every dim longer than one is stretched by one factor;
    with a plan (a set of dims, see ``plans``) only those dims grow, each multiplied by one
    integer, so that whatever divides them still does."""
    long, whole = (_long_dims(spec), False) if plan is None else (plan, True)

    def total(factor):
        return sum(math.prod(s) for s in _stretched(spec, long, factor, whole)[0])

    low, high = 1, 1
    while long and total(high) < target and high < 1e6:
        low, high = high, high * 2
    if whole:  # the largest integer factor whose case holds at most ``target`` elements
        while high - low > 1:
            mid = (low + high) // 2
            low, high = (mid, high) if total(mid) <= target else (low, mid)
        return _stretched(spec, long, high if total(high) <= target else low, whole)
    for _ in range(40):  # bisect: the factor whose case holds about ``target`` elements
        mid = (low + high) / 2
        low, high = (mid, high) if total(mid) < target else (low, mid)
    return _stretched(spec, long, high, whole)


def plans(spec, libs):
    """For a spec whose function fixes a shape of its own (a ``view(3, 2)``, a layer norm's
    ``normalized_shape``, a conv's weight, a weight of one entry per class), the sets of dims
    that can grow, largest first: those that, each doubled and each tripled, still run forward
    and backward in every library. Trying is the test: no spec says how it scales. Raises
    ValueError where no dim can grow (data fixed in the function: the ``*_at_kinks``)."""
    long = sorted(_long_dims(spec), reverse=True)
    for n in range(len(long), 0, -1):
        for dims in itertools.combinations(long, n):
            try:
                for factor in (2, 3):
                    shapes, int_args = _stretched(spec, dims, factor, whole=True)
                    for lib in libs.values():
                        step_of(lib, spec, make_inputs(lib, spec, shapes, int_args))[0]()
            except Exception:  # noqa: BLE001, S112 - this set of dims does not scale
                continue
            yield set(dims)
    raise ValueError("no dim of the case can grow: the function fixes them all")


def make_inputs(lib, spec, shapes, int_args, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    out = []
    for k, shape in enumerate(shapes):
        if k in int_args:
            ishape, high = int_args[k]
            out.append(lib.tensor(rng.integers(0, high, ishape)))
            continue
        vals = rng.uniform(*spec.domain, size=shape)
        if spec.distinct:
            n = math.prod(shape)
            vals = (rng.permutation(n) + rng.uniform(0.1, 0.4, n)).reshape(shape) / max(n, 1)
            vals = spec.domain[0] + vals * (spec.domain[1] - spec.domain[0])
        out.append(lib.tensor(vals, dtype=lib.float32, requires_grad=True))
    return out


def _float_outputs(res):
    return [o for o in (res if isinstance(res, tuple) else (res,))
            if o.is_floating_point() and o.requires_grad]


def step_of(lib, spec, xs):
    """The timed step: the spec's function, a weighted sum of its float outputs (fixed
    pseudo-random weights: a plain sum of a softmax has a zero gradient), backward."""
    import numpy as np

    diff = [x for x in xs if x.requires_grad]
    rng = np.random.default_rng(1)
    weights = [lib.tensor(rng.uniform(0.5, 1.5, tuple(o.shape)), dtype=o.dtype)
               for o in _float_outputs(spec.fn(lib, *xs))]

    def step():
        for x in diff:
            x.grad = None
        res = spec.fn(lib, *xs)
        outs = _float_outputs(res)
        if outs:
            sum((o * w).sum() for o, w in zip(outs, weights)).backward()
        return res
    return step, diff


def agree(spec, ember_run, torch_run):
    """Whether ember's outputs and gradients match PyTorch's (float32 tolerances)."""
    import numpy as np

    (e_res, e_diff), (t_res, t_diff) = ember_run, torch_run
    e_out = e_res if isinstance(e_res, tuple) else (e_res,)
    t_out = t_res if isinstance(t_res, tuple) else (t_res,)
    pairs = list(zip(e_out, t_out)) + [(a.grad, b.grad) for a, b in zip(e_diff, t_diff)]
    for a, b in pairs:
        if (a is None) != (b is None):
            return False
        if a is None:
            continue
        a, b = a.detach().numpy(), b.detach().numpy(force=True)
        if a.shape != b.shape:
            return False
        if a.dtype.kind in "fc" and a.size:
            scale = max(float(np.abs(b).max()), 1e-30)
            if not np.allclose(a, b, rtol=1e-3 * spec.tol, atol=1e-4 * scale * spec.tol,
                               equal_nan=True):
                return False
        elif not np.array_equal(a, b):
            return False
    return True


def _numel(res):
    return sum(o.numel() for o in (res if isinstance(res, tuple) else (res,)))


def input_target(spec, target, lib, plan=None):
    """How many input elements give a case whose inputs and outputs both hold at most about
    ``target`` elements: the outputs' growth is measured on two small cases (``diag_embed``
    of n elements makes n^2, ``kron`` of two makes their product)."""
    sizes = []
    for probe in (250, 1000):
        shapes, int_args = scaled(spec, probe, plan)
        xs = make_inputs(lib, spec, shapes, int_args)
        sizes.append((sum(math.prod(s) for s in shapes), _numel(spec.fn(lib, *xs))))
    (in1, out1), (in2, out2) = sizes
    if out2 <= max(in2, 1) or in2 == in1:
        return target
    growth = max(math.log(out2 / max(out1, 1)) / math.log(in2 / in1), 1.0)
    return min(target, in2 * (target / out2) ** (1 / growth))


def _why(name, exc):
    return f"{name}: {type(exc).__name__}: {str(exc)[:80]}"


def prepared(spec, size, libs, plan=None):
    """The spec's case at ``size`` (see ``scaled``), run once in each library: its shapes,
    each library's (result, inputs) and step. Raises ValueError saying which library failed."""
    try:
        target = input_target(spec, SIZES[size], libs["ember"], plan)
    except Exception as exc:  # noqa: BLE001 - reported by the caller
        raise ValueError(_why("ember", exc)) from exc
    shapes, int_args = scaled(spec, target, plan)
    runs, steps = {}, {}
    for name, lib in libs.items():
        try:
            xs = make_inputs(lib, spec, shapes, int_args)
            step, diff = step_of(lib, spec, xs)
            runs[name] = (step(), diff)
            steps[name] = step
        except Exception as exc:  # noqa: BLE001 - reported by the caller
            raise ValueError(_why(name, exc)) from exc
    return shapes, runs, steps


def grown(spec, size, libs):
    """The first of ``plans`` (four at most) whose case runs at ``size``, and that run."""
    failed = None
    for plan in itertools.islice(plans(spec, libs), 4):
        try:
            return plan, prepared(spec, size, libs, plan)
        except ValueError as exc:  # grows by 2 and 3, not further: a kernel outgrows its input
            failed = exc
    raise ValueError(failed)


def measure(spec, size, libs, harness, args):
    """One row: the spec at one size, or why it was not timed. A spec that does not run with
    every dim stretched runs with the dims ``grown`` finds can grow (listed as ``grown``)."""
    row = {"op": spec.name, "size": size, "shapes": []}
    try:
        shapes, runs, steps = prepared(spec, size, libs)
    except ValueError as exc:
        try:
            plan, (shapes, runs, steps) = grown(spec, size, libs)
        except ValueError as failed:
            row["skipped"] = f"{exc}; scaling some dims only: {str(failed)[:80]}"
            return row
        row["grown"] = sorted(plan)
    row["shapes"] = [list(s) for s in shapes]
    if not agree(spec, runs["ember"], runs["torch"]):
        row["skipped"] = "ember and PyTorch disagree"
        return row

    class _C:  # what harness.time_case times
        def __init__(self, step):
            self.step = step
    try:
        samples, _ = harness.time_case({n: _C(s) for n, s in steps.items()}, args.repeat,
                                       args.min_time)
    except (MemoryError, RuntimeError) as exc:  # over --memory-gb
        row["skipped"] = f"timing: {type(exc).__name__}: {str(exc)[:80]}"
        return row
    row.update({n: statistics.median(s) * 1e6 for n, s in samples.items()})
    row["ratio"] = row["ember"] / row["torch"]
    return row


def table(rows):
    timed = sorted((r for r in rows if "ratio" in r), key=lambda r: -r["ratio"])
    lines = [f"{'op':28} {'size':6} {'shape':24} {'ember us':>10} {'torch us':>10} "
             f"{'ember/torch':>11}", "-" * 94]
    for r in timed:
        shape = "x".join(map(str, r["shapes"][0])) if r["shapes"] else ""
        lines.append(f"{r['op'][:28]:28} {r['size']:6} {shape[:24]:24} {r['ember']:10.1f} "
                     f"{r['torch']:10.1f} {r['ratio']:10.2f}x")
    for size in SIZES:
        ratios = [r["ratio"] for r in timed if r["size"] == size]
        if ratios:
            over = sorted(r["op"] for r in timed if r["size"] == size and r["ratio"] > 2)
            lines.append(f"\n{size}: {len(ratios)} ops timed, median ember/torch "
                         f"{statistics.median(ratios):.2f}x; over 2x: {len(over)}"
                         + (f" ({', '.join(over)})" if over else ""))
    skipped = [r for r in rows if "skipped" in r]
    if skipped:
        lines.append(f"\nnot timed ({len(skipped)}):")
        lines += [f"  {r['op']} ({r['size']}): {r['skipped']}" for r in skipped]
    return "\n".join(lines)


def main(argv=None):
    sys.path.insert(0, str(ROOT))
    from bench import run

    args = parse_args(argv)
    run.pin_threads(args.threads)
    args.quick, args.repeat = False, args.repeat
    ember, torch, threadpoolctl = run.import_libraries(args)
    if torch is None:
        raise SystemExit("bench/ops.py compares with PyTorch: install torch==2.13.0")
    from bench import harness

    info = run.machine_info(args, ember, torch, threadpoolctl)
    for label, text in info.items():
        print(f"{label:12} : {text}")
    libs = {"ember": ember, "torch": torch}
    limit = int(args.memory_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    rows = []
    chosen = [s for s in specs() if args.only is None or s.name in args.only]
    for k, spec in enumerate(chosen):
        for size in args.size:
            rows.append(measure(spec, size, libs, harness, args))
        print(f"\r{k + 1}/{len(chosen)} specs", end="", file=sys.stderr, flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps({"machine": info, "rows": rows}, indent=1))
    print(file=sys.stderr)
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
