"""ember's benchmark suite: ember against PyTorch eager and against hand-written NumPy.

    python bench/run.py [--quick] [--threads N] [--only mlp,cnn] [--repeat R] [--json PATH]

Every workload (``bench/workloads/``) computes the same thing three ways: ember, PyTorch (when
importable and not ``--no-torch``) and, where it makes sense, NumPy written by hand, forward and
backward (the floor ember can hope to reach); the real-program workloads (``makemore``, ``gpt``)
run one model definition built from either library. Before timing, each case checks that all
contenders agree on the loss and every gradient; a disagreement aborts that case and makes the
run exit with status 1. Then the contenders run in interleaved rounds (ember, torch, numpy,
ember, ...) and the table reports medians and the ratios against the targets. All libraries are
pinned to ``--threads`` threads. ``--quick`` runs tiny sizes once or twice, as a smoke test
(no meaningful timings).
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORKLOADS = ("overhead", "mlp", "cnn", "big", "hvp", "deep", "checkpoint", "persample",
             "makemore", "gpt", "compile")
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
MIB = 2**20


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes, few repeats: a smoke test, not a measurement")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for every library's BLAS/OpenMP pool (default 1)")
    parser.add_argument("--only", type=lambda s: s.split(","), default=list(WORKLOADS),
                        help="comma-separated workloads to run (default: all of "
                             + ",".join(WORKLOADS) + ")")
    parser.add_argument("--repeat", type=int, default=None,
                        help="interleaved timing rounds (default 9, --quick 2)")
    parser.add_argument("--min-time", type=float, default=None,
                        help="seconds each timing sample lasts at least (default 0.05, --quick 0)")
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    parser.add_argument("--torch-compile", action="store_true",
                        help="the compile workload also times PyTorch's torch.compile (tens "
                             "of seconds to compile each case)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--profile", action="store_true",
                        help="also print cProfile's top 15 functions (by own time) of ember's "
                             "step in each case")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.only) - set(WORKLOADS))
    if unknown:
        parser.error(f"unknown workload(s) {','.join(unknown)}; choose from {','.join(WORKLOADS)}")
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    args.repeat = args.repeat or (2 if args.quick else 9)
    args.min_time = args.min_time if args.min_time is not None else (0 if args.quick else 0.05)
    return args


def pin_threads(n):
    """Set the thread-count variables; they only work if set before NumPy/PyTorch load."""
    if "numpy" in sys.modules or "torch" in sys.modules:
        raise RuntimeError("pin_threads must run before NumPy or PyTorch is imported")
    for var in THREAD_VARS:
        os.environ[var] = str(n)


def import_libraries(args):
    """ember (from this checkout), PyTorch unless unavailable or unwanted, threadpoolctl."""
    sys.path.insert(0, str(ROOT))  # this checkout's ember, and the bench package
    import ember

    torch = None
    if not args.no_torch:
        try:
            import torch
        except ImportError:
            torch = None
        else:
            torch.set_num_threads(args.threads)
    try:  # optional: report the pools' sizes when threadpoolctl is installed
        import threadpoolctl
    except ImportError:
        threadpoolctl = None
    else:  # ember's own knob, as a PyTorch program pins threads (it resizes NumPy's pools)
        ember.set_num_threads(args.threads)
    return ember, torch, threadpoolctl


def cpu_model():
    try:
        text = Path("/proc/cpuinfo").read_text()
        return re.search(r"^model name\s*:\s*(.*)$", text, re.M).group(1).strip()
    except (OSError, AttributeError):
        return platform.processor() or platform.machine()


def machine_info(args, ember, torch, threadpoolctl):
    """The header: what ran where, as ``(label, text)`` pairs."""
    import numpy as np

    cores = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    info = {"machine": f"{cpu_model()}, {cores} cores ({usable} usable), {platform.platform()}",
            "load average": " ".join(f"{v:.2f}" for v in os.getloadavg())}
    info["python"] = platform.python_version()
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{blas.get('name')} {blas.get('version')}"
    except Exception:  # older NumPy: no dict mode
        blas = "unknown"
    info["numpy"] = f"{np.__version__} (BLAS: {blas})"
    if torch is not None:
        torch_blas = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show())
        torch_blas = torch_blas.group(1) if torch_blas else "?"
        info["torch"] = (f"{torch.__version__} (BLAS: {torch_blas}, "
                         f"intra-op threads {torch.get_num_threads()})")
    else:
        info["torch"] = "not used (--no-torch)" if args.no_torch else "not installed"
    info["ember"] = f"{ember.__version__} ({Path(ember.__file__).parent})"
    env = ", ".join(f"{var}={os.environ[var]}" for var in THREAD_VARS)
    if threadpoolctl is not None:
        pools = "; ".join(" ".join(filter(None, (p["internal_api"], p.get("version"))))
                          + f" ({Path(p['filepath']).name}): {p['num_threads']}"
                          for p in threadpoolctl.threadpool_info())
        info["threads"] = f"{args.threads} requested; {env}; effective pools: {pools}"
    else:
        info["threads"] = f"{args.threads} requested; {env}; threadpoolctl not installed"
    info["timing"] = (f"{args.repeat} interleaved rounds, samples of >= {args.min_time:g} s, "
                      "median" + (" (--quick: smoke test, not a measurement)" if args.quick
                                  else ""))
    return info


def run_case(case, args, harness):
    """Check, time and (when asked) trace one case; returns ``(rows, check record)``."""
    print(f"- {case.name}: ", end="", flush=True)
    try:
        contenders = {}
        for lib, build in {**case.contenders, **(case.references or {})}.items():
            try:
                contenders[lib] = build()
            except Exception as exc:
                raise harness.CheckFailed(f"{case.name}: building the {lib} contender "
                                          f"failed: {exc!r}") from exc
        names, worst = harness.check(case, contenders)
    except harness.CheckFailed as exc:
        print(f"CHECK FAILED: {exc}", flush=True)
        word = {lib: "failed" for lib in case.contenders}
        return ([harness.make_row(case.workload, case.variant, case.unit, word, case.target)],
                {"case": case.name, "ok": False, "message": str(exc)})
    shown = [lib for lib in contenders if lib not in (case.references or {})]
    also = f" with {', '.join(case.references)}" if case.references else ""
    print(f"{', '.join(shown)} agree on {len(names)} values{also} (worst error "
          f"{worst:.1e} of the largest magnitude); timing ...", end="", flush=True)
    samples, numbers = harness.time_case(contenders, args.repeat, args.min_time)
    values = {lib: harness.median(s) * case.scale for lib, s in samples.items()}
    refs = {lib: values.pop(lib) for lib in case.references or {}}
    row = harness.make_row(case.workload, case.variant, case.unit, values, case.target, refs)
    if len(refs) == 1:
        row["target"] += f" ({next(iter(refs.values())):.3g} {case.unit})"
    elif refs:
        row["target"] += " (" + "; ".join(f"{lib} {v:.3g}" for lib, v in refs.items()) + ")"
    row["samples_s"], row["calls_per_sample"] = samples, numbers
    rows = [row]
    if case.saved_bytes:
        traced = {lib: harness.peak_memory(c) for lib, c in contenders.items()
                  if lib in harness.TRACED}
        saved = case.saved_bytes / MIB
        for k, what in enumerate(("kept after forward", "peak in backward")):
            values = {lib: traced[lib][k] / MIB if lib in traced else None for lib in contenders}
            target = case.memory_target if k == 1 else None
            rows.append(harness.make_row(case.workload, f"{case.variant}: {what}", "MiB", values,
                                         target, {"saved": saved}))
        rows[-1]["target"] += f" ({saved:.3g} MiB)"
    print(" done", flush=True)
    if args.profile:
        print(harness.profile(contenders["ember"].step, max(args.min_time, 1.0)), flush=True)
    return rows, {"case": case.name, "ok": True, "values": names, "worst_error": worst}


def main(argv=None):
    args = parse_args(argv)
    pin_threads(args.threads)
    ember, torch, threadpoolctl = import_libraries(args)
    from bench import harness

    info = machine_info(args, ember, torch, threadpoolctl)
    width = max(map(len, info))
    for label, text in info.items():
        print(f"{label.ljust(width)} : {text}")
    print()
    libs = {"ember": ember, **({"torch": torch} if torch is not None else {})}
    if args.torch_compile and torch is not None:
        os.environ["BENCH_TORCH_COMPILE"] = "1"  # (read by bench/workloads/compile.py)
    rows, checks = [], []
    for name in WORKLOADS:
        if name not in args.only:
            continue
        workload = importlib.import_module(f"bench.workloads.{name}")
        for case in workload.cases(libs, args.quick):
            case_rows, record = run_case(case, args, harness)
            rows += case_rows
            checks.append(record)

    print()
    print(harness.format_table(rows))
    failed = [c["case"] for c in checks if not c["ok"]]
    print()
    if failed:
        print(f"correctness: {len(failed)} of {len(checks)} cases FAILED: {', '.join(failed)}")
    else:
        print(f"correctness: all {len(checks)} cases agree (loss and every gradient)")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"machine": info, "quick": args.quick, "threads": args.threads, "rows": rows,
             "checks": checks}, indent=1, default=float))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
