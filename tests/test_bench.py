"""The benchmark suite (``bench/``): a ``--quick`` smoke run of every workload, and its checks.

No timing is asserted: the quick sizes are too small to mean anything, and the machine is
shared. What must hold is that every workload runs, ember agrees with the NumPy floor (and
PyTorch, when installed) on the loss and every gradient, and the table has a row per workload.
"""
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bench import harness

ROOT = Path(__file__).resolve().parent.parent
WORKLOADS = ("overhead", "mlp", "cnn", "big", "hvp", "deep", "checkpoint", "persample")


def _run(*flags):
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--quick", *flags],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def _table(stdout):
    """The result table's rows, split into cells."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"workload +variant ", line))
    rows = []
    for line in lines[start + 2:]:
        if not line.strip():
            break
        rows.append(re.split(r"\s{2,}", line))
    return rows


def _has_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.parametrize("no_torch", [False, True], ids=["default", "no-torch"])
def test_quick_run_checks_and_reports_every_workload(tmp_path, no_torch):
    out = _run("--only", ",".join(WORKLOADS), "--json", str(tmp_path / "results.json"),
               *(["--no-torch"] if no_torch else []))
    with_torch = not no_torch and _has_torch()
    # Every case passed its agreement check before being timed.
    agreed = re.findall(r"^- (.+?): (.+?) agree on \d+ values", out, re.M)
    libs = "ember, torch, numpy" if with_torch else "ember, numpy"
    assert agreed and all(found == libs for _, found in agreed), out
    assert f"correctness: all {len(agreed)} cases agree" in out
    assert "FAILED" not in out
    rows = _table(out)
    assert {row[0] for row in rows} == set(WORKLOADS)
    for workload, variant, unit, ember, torch, numpy_, *_ in rows:
        assert float(ember) > 0 and float(numpy_) > 0, (workload, variant)
        if with_torch and unit != "MiB":  # PyTorch's CPU memory is not traced
            assert float(torch) > 0, (workload, variant)
        else:
            assert torch == "n/a", (workload, variant)
    assert [row[:2] for row in rows if row[2] == "MiB"] == [
        ["deep", "10 layers, 4K: kept after forward"], ["deep", "10 layers, 4K: peak in backward"],
        ["checkpoint", "4 layers in 2 segments: kept after forward"],
        ["checkpoint", "4 layers in 2 segments: peak in backward"]]
    # The header says what ran and how many threads each pool has.
    assert re.search(r"^threads\s+: 1 requested; OMP_NUM_THREADS=1", out, re.M)
    assert re.search(r"^torch\s+: " + (r"2\." if with_torch else "not"), out, re.M)
    results = json.loads((tmp_path / "results.json").read_text())
    assert [[r["workload"], r["variant"]] for r in results["rows"]] == [r[:2] for r in rows]
    assert all(c["ok"] for c in results["checks"]) and len(results["checks"]) == len(agreed)


@pytest.mark.slow
@pytest.mark.parametrize("no_torch", [False, True], ids=["default", "no-torch"])
def test_quick_run_of_the_program_workloads(no_torch):
    """makemore's and the GPTs' training steps run, and ember agrees with PyTorch (and the NumPy
    floor, for the bigram and the MLP) on the loss and the gradient of every parameter."""
    out = _run("--only", "makemore,gpt", *(["--no-torch"] if no_torch else []))
    with_torch = not no_torch and _has_torch()
    agreed = dict(re.findall(r"^- (.+?): (.+?) agree on \d+ values", out, re.M))
    models = ("bigram", "mlp", "rnn", "gru", "bow", "transformer", "gpt-nano", "nanogpt")
    assert len(agreed) == len(models) and "FAILED" not in out, out
    for case, libs in agreed.items():
        floor = case.startswith(("makemore bigram", "makemore mlp"))
        assert libs == ", ".join(["ember"] + ["torch"] * with_torch + ["numpy"] * floor), case
    rows = _table(out)
    assert [row[0] for row in rows] == ["makemore"] * 6 + ["gpt"] * 2
    assert [row[1].split(",")[0] for row in rows] == list(models)
    for workload, variant, unit, ember, torch, *_ in rows:
        assert unit == "ms/step" and float(ember) > 0, (workload, variant)
        assert (float(torch) > 0) if with_torch else torch == "n/a", (workload, variant)
    assert f"correctness: all {len(models)} cases agree" in out


@pytest.mark.slow
def test_quick_run_of_the_compile_workload():
    """The compiled steps (overhead chains, MLP, CNN, makemore's bigram, MLP and GRU, an HVP)
    run, record and agree with PyTorch and ember eager."""
    out = _run("--only", "compile")
    agreed = re.findall(r"^- compile (.+?): .*?agree on \d+ values with ember eager", out, re.M)
    assert agreed == ["overhead mul/add", "overhead exp/tanh/sigmoid", "mlp batch 1",
                      "mlp batch 8", "mlp batch 32", "cnn batch 4", "makemore bigram",
                      "makemore mlp", "makemore gru", "hvp batch 8"], out
    assert out.count("recorded in") == 10 and out.count("us] ") == 10, out  # (and the guard)
    assert "correctness: all 10 cases agree" in out


def _case():
    return harness.Case("demo", "tiny", "ms/step", {}, rtol=1e-4, atol=1e-5)


def _contender(loss, grad):
    return harness.Contender(step=lambda: None,
                             evaluate=lambda: {"loss": loss, "x.grad": np.asarray(grad)})


def test_check_accepts_float32_noise_and_names_the_first_disagreement():
    grad = np.array([1.0, -2.0, 1e-7])
    close = {"ember": _contender(1.0, grad * (1 + 3e-6)), "numpy": _contender(1.0, grad)}
    names, worst = harness.check(_case(), close)
    assert names == ["loss", "x.grad"] and 0 < worst < 1e-5
    # The tiny element may be off by a lot relative to itself: atol scales with max |grad|.
    tiny_off = {"ember": _contender(1.0, grad + [0, 0, 1e-6]), "numpy": _contender(1.0, grad)}
    harness.check(_case(), tiny_off)
    wrong = {"ember": _contender(1.0, grad * [1, 1.001, 1]), "numpy": _contender(1.0, grad)}
    with pytest.raises(harness.CheckFailed, match=r"x.grad differs between ember and numpy"):
        harness.check(_case(), wrong)
    with pytest.raises(harness.CheckFailed, match=r"loss differs"):
        harness.check(_case(), {"ember": _contender(1.01, grad), "numpy": _contender(1.0, grad)})


@pytest.mark.slow
def test_time_case_interleaves_rounds():
    calls = []
    contenders = {lib: harness.Contender(step=lambda lib=lib: calls.append(lib),
                                         evaluate=dict) for lib in ("ember", "numpy")}
    samples, numbers = harness.time_case(contenders, repeat=3, min_time=0)
    assert numbers == {"ember": 1, "numpy": 1}  # one warm-up call each, then three rounds
    assert calls == ["ember", "numpy"] + ["ember", "numpy"] * 3
    assert all(len(s) == 3 and min(s) >= 0 for s in samples.values())


# --------------------------------------------------------------------------- bench/ops.py


def test_ops_bench_scales_a_spec_consistently():
    """A spec's largest case stretched to about the size asked: dims that were equal stay
    equal (the shapes still broadcast and multiply), dims of one stay one."""
    from bench import ops
    from tests.opspec import BINARY_SHAPES, Spec

    spec = Spec("probe", lambda L, a, b: a * b, BINARY_SHAPES + [((2, 3), (3, 4))])
    shapes, _ = ops.scaled(spec, 10_000)
    (m, k), (k2, n) = shapes
    assert k == k2 and 8_000 <= m * k + k2 * n <= 12_000
    shapes, _ = ops.scaled(Spec("one", lambda L, a: a, [((2, 1),)]), 1_000)
    assert shapes[0][1] == 1 and 900 <= shapes[0][0] <= 1_100


def test_ops_bench_grows_only_the_dims_a_spec_leaves_free():
    """A spec whose function fixes a shape of its own (a layer norm's normalized_shape) grows
    the other dims, each by one integer factor; one that fixes every dim is refused."""
    import ember
    from bench import ops
    from tests.opspec import Spec

    spec = Spec("ln", lambda L, a: L.nn.functional.layer_norm(a, (5,)), [((2, 3, 5),)])
    plan = next(ops.plans(spec, {"ember": ember}))
    assert plan == {2, 3}
    ((n, c, d),), _ = ops.scaled(spec, 10_000, plan)
    assert d == 5 and n // 2 == c // 3 and n % 2 == c % 3 == 0 and 5_000 <= n * c * d <= 10_000
    spec = Spec("fixed", lambda L, a: a + L.tensor([1.0, 2.0, 3.0]), [((3,),)])
    with pytest.raises(ValueError, match="no dim"):
        next(ops.plans(spec, {"ember": ember}))


@pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                    reason="bench/ops.py compares with PyTorch")
def test_ops_bench_runs_and_checks_agreement(tmp_path):
    out = tmp_path / "ops.json"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "ops.py"), "--only",
                           "mul,softmax", "--size", "small", "--repeat", "1", "--min-time",
                           "0", "--json", str(out)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = json.loads(out.read_text())["rows"]
    assert sorted(r["op"] for r in rows) == ["mul", "softmax"]
    assert all("ratio" in r and r["ember"] > 0 and r["torch"] > 0 for r in rows), rows
    assert re.search(r"small: 2 ops timed, median ember/torch \d+\.\d\dx", proc.stdout)
