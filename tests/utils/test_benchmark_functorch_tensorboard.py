"""``torch.utils.benchmark``, ``functorch`` (as ``python -m ember run`` serves it) and
``torch.utils.tensorboard``, compared with PyTorch 2.13."""
import itertools
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember
from ember.utils import benchmark

from ..conftest import to_np

# --------------------------------------------------------------------------- benchmark


def _masked(text):
    """A Measurement's printed form without the numbers and the object address."""
    text = re.sub(r"0x[0-9a-f]+", "ADDR", text)
    text = re.sub(r"^<\w+\.", "<torch.", text)  # the module path: ember. or torch.
    text = re.sub(r"\b(ns|us|ms|s)$", "UNIT", text, flags=re.M)
    return re.sub(r"\d+(\.\d+)?", "N", text)


def test_timer_measurements_print_as_torchs(torch):
    from torch.utils import benchmark as tb
    for lib, bm in ((ember, benchmark), (torch, tb)):
        t = bm.Timer("x + y", globals={"x": lib.ones(10), "y": lib.ones(10)}, label="add",
                     sub_label="ones", description="desc", num_threads=1)
        m = t.timeit(100)
        text = _masked(repr(m))
        assert m.number_per_run == 100 and len(m.times) == 1 and m.iqr == 0
        assert m.mean == m.median == m.times[0] == m.raw_times[0] / 100
        if bm is benchmark:
            mine = text
    assert mine == text
    assert text == ("<torch.utils.benchmark.utils.common.Measurement object at ADDR>\n"
                    "add: ones\ndesc\n  N UNIT\n  N measurement, N runs , N thread")


def test_measurement_statistics_and_repr_against_torch(torch):
    from torch.utils.benchmark.utils import common as tc

    from ember.utils.benchmark.utils import common as ec
    raw = [3.1e-4, 2.7e-4, 2.9e-4, 5.0e-4, 2.8e-4, 3.0e-4]
    spec = dict(stmt="f(x)", setup="x = 1", label=None, sub_label="s", num_threads=2)
    mine = ec.Measurement(100, raw, ec.TaskSpec(**spec))
    theirs = tc.Measurement(100, raw, tc.TaskSpec(**spec))
    for name in ["median", "mean", "iqr", "times", "significant_figures", "has_warnings",
                 "title", "env", "as_row_name", "stmt", "num_threads"]:
        a, b = getattr(mine, name), getattr(theirs, name)
        assert (a == b) if isinstance(a, (str, bool, type(None))) else \
            a == pytest.approx(b, rel=1e-12), name
    assert repr(mine).split("\n")[1:] == repr(theirs).split("\n")[1:]
    assert mine.meets_confidence(0.5) == theirs.meets_confidence(0.5)
    merged = ec.Measurement.merge([mine, mine])[0]
    assert merged.number_per_run == 1 and merged.times == mine.times * 2
    for t in [3e-10, 4.5e-8, 2e-6, 7e-4, 3.0, 120.0]:
        assert ec.select_unit(t) == tc.select_unit(t)


def _measurements(common):
    """Fixed Measurements over labels, thread counts, envs, rows and columns (one missing)."""
    rng = np.random.default_rng(0)
    out = []
    for label, th, env, sub, desc in itertools.product(
            ["reduce", None], [1, 4], ["env-a", "env-b"], ["sum", "a longer name"],
            ["n=10", "n=1000"]):
        if (th, sub, desc) == (4, "sum", "n=1000") or (label and env == "env-b"):
            continue
        spread = 0.4 if sub == "sum" else 0.02
        raw = list(rng.uniform(1e-6, 3e-4) * (1 + rng.uniform(0, spread, 7)) * 100)
        out.append(common.Measurement(100, raw, common.TaskSpec(
            stmt="x." + sub, setup="", label=label, sub_label=sub, description=desc,
            num_threads=th, env=env)))
    return out


@pytest.mark.parametrize("trim,colorize,highlight", list(itertools.product(
    [False, True], [None, "columns", "rows"], [False, True])))
def test_compare_prints_torchs_tables(torch, trim, colorize, highlight):
    from torch.utils.benchmark.utils import common as tc
    from torch.utils.benchmark.utils import compare as tcompare

    from ember.utils.benchmark.utils import common as ec
    texts = []
    for common, compare in ((ec, benchmark), (tc, tcompare)):
        c = compare.Compare(_measurements(common))
        if trim:
            c.trim_significant_figures()
        if colorize:
            c.colorize(rowwise=colorize == "rows")
        if highlight:
            c.highlight_warnings()
        texts.append(str(c))
    assert texts[0] == texts[1]


def test_autoranges_run_to_their_stopping_rules():
    calls = []
    t = benchmark.Timer("sum(range(50))", label="sum")
    m = t.blocked_autorange(callback=lambda n, s: calls.append((n, s)), min_run_time=0.02)
    assert sum(m.raw_times) >= 0.02 and len(calls) == len(m.raw_times)
    assert all(n == m.number_per_run for n, _ in calls)
    m = t.adaptive_autorange(threshold=0.5, max_run_time=1.0)
    assert len(m.times) > 3 or sum(m.raw_times) > 1.0
    assert benchmark.Timer("torch.ones(3).sum()").timeit(5).stmt == "torch.ones(3).sum()"
    with pytest.raises(ValueError, match="Currently only a `str` stmt is supported."):
        benchmark.Timer(lambda: 0)


# --------------------------------------------------------------------------- functorch

def test_functorch_transforms_warn_as_torch_and_give_the_same_values(torch):
    import functorch as real

    from ember import _functorch as mine
    x = np.array([0.5, -1.0, 2.0])
    for name, call in [
        ("vmap", lambda ft, T, t: ft.vmap(T.sin)(t)),
        ("grad", lambda ft, T, t: ft.grad(lambda v: (v ** 3).sum())(t)),
        ("grad_and_value", lambda ft, T, t: ft.grad_and_value(lambda v: (v ** 2).sum())(t)[0]),
        ("vjp", lambda ft, T, t: ft.vjp(T.exp, t)[1](T.ones_like(t))[0]),
        ("jvp", lambda ft, T, t: ft.jvp(T.exp, (t,), (T.ones_like(t),))[1]),
        ("jacrev", lambda ft, T, t: ft.jacrev(T.sin)(t)),
        ("jacfwd", lambda ft, T, t: ft.jacfwd(T.sin)(t)),
        ("hessian", lambda ft, T, t: ft.hessian(lambda v: (v ** 3).sum())(t)),
    ]:
        results = []
        for ft, T in ((mine, ember), (real, torch)):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                out = call(ft, T, T.tensor(x))
            results.append((to_np(out), [(w.category, str(w.message)) for w in caught
                                         if w.category is FutureWarning]))
        np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
        assert results[0][1] == results[1][1], name


def test_make_functional_and_ensembles_as_torch(torch):
    import functorch as real

    from ember import _functorch as mine
    rng = np.random.default_rng(1)
    w, b, x = rng.standard_normal((2, 3)), rng.standard_normal(2), rng.standard_normal((4, 3))
    out = []
    for ft, T in ((mine, ember), (real, torch)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = T.nn.Linear(3, 2).double()
            with T.no_grad():
                m.weight.copy_(T.tensor(w))
                m.bias.copy_(T.tensor(b))
            fm, params = ft.make_functional(m)
            assert type(fm).__name__ == "FunctionalModule" and len(params) == 2
            assert params[0] is not m.weight and params[0].requires_grad
            y = fm(params, T.tensor(x))
            grads = ft.grad(lambda p: fm(p, T.tensor(x)).sum())(params)
            _, frozen = ft.make_functional(m, disable_autograd_tracking=True)
            bn = T.nn.BatchNorm1d(3).double()
            fb, bp, bb = ft.make_functional_with_buffers(bn)
            z = fb(bp, bb, T.tensor(x))
            with pytest.raises(RuntimeError, match="`model` has buffers"):
                ft.make_functional(bn)
            models = [T.nn.Linear(3, 2) for _ in range(3)]
            f0, ps, bs = ft.combine_state_for_ensemble(models)
            stacked = (tuple(p.shape for p in ps), len(bs), ps[0].requires_grad,
                       to_np(ps[0][1]).tolist() == to_np(models[1].weight).tolist())
            with pytest.raises(RuntimeError, match="Expected at least one model, got 0."):
                ft.combine_state_for_ensemble([])
            models[0].eval()
            with pytest.raises(RuntimeError, match="same training/eval mode"):
                ft.combine_state_for_ensemble(models)
        out.append((to_np(y), [to_np(g) for g in grads], frozen[0].requires_grad, to_np(z),
                    tuple(stacked)))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-12)
    for a, b_ in zip(out[0][1], out[1][1]):
        np.testing.assert_allclose(a, b_, rtol=1e-12)
    np.testing.assert_allclose(out[0][3], out[1][3], rtol=1e-12)
    assert out[0][2] == out[1][2] and out[0][4] == out[1][4]


@pytest.mark.slow
def test_ember_run_serves_functorch(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import warnings\nwarnings.simplefilter('ignore')\n"
                      "import torch\nfrom functorch import vmap, grad, make_functional\n"
                      "import functorch\n"
                      "print(grad(lambda x: (x * x).sum())(torch.tensor([1.0, 2.0])))\n"
                      "print(vmap(torch.cos)(torch.zeros(2)))\n")
    out = subprocess.run([sys.executable, "-m", "ember", "run", str(script)],
                         capture_output=True, text=True, check=True).stdout
    assert out == "tensor([2., 4.])\ntensor([1., 1.])\n"


# --------------------------------------------------------------------------- tensorboard

def _events(logdir):
    """Every (tag, step, value) in the event files under ``logdir``, sorted."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    found = []
    for path in sorted(logdir.rglob("events.out.tfevents.*")):
        for event in EventFileLoader(str(path)).Load():
            for v in event.summary.value:
                kind = v.WhichOneof("value")
                data = getattr(v, kind)
                if kind == "histo":
                    data = (data.min, data.max, data.num, data.sum, data.sum_squares,
                            tuple(data.bucket_limit), tuple(data.bucket))
                elif kind == "tensor":
                    data = (tuple(data.string_val), tuple(data.float_val))
                elif kind == "image":
                    data = (data.height, data.width, data.colorspace)
                found.append((path.parent.name, v.tag, event.step, kind, data))
    return sorted(found)


def test_summary_writer_writes_what_torchs_writes(torch, tmp_path):
    pytest.importorskip("tensorboard")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    from ember.utils.tensorboard import SummaryWriter
    values = np.random.default_rng(0).standard_normal(200)
    image = np.random.default_rng(1).random((3, 4, 5))
    for lib, writer_cls, name in ((ember, SummaryWriter, "mine"), (torch, TorchWriter, "ref")):
        with writer_cls(log_dir=str(tmp_path / name)) as w:
            for step in range(3):
                w.add_scalar("loss", lib.tensor(1.0 / (step + 1)), step)
                w.add_scalars("acc", {"train": 0.5 + step, "val": 0.25}, step)
            w.add_scalar("lr", 0.1, 7, new_style=True)
            w.add_histogram("weights", lib.tensor(values), 2)
            w.add_histogram("coarse", values, 3, bins=10, max_bins=4)
            w.add_text("note", "hello **world**", 1)
            w.add_image("img", lib.tensor(image), 0)
            w.add_image("img_hwc", image.transpose(1, 2, 0), 1, dataformats="HWC")
    mine, theirs = _events(tmp_path / "mine"), _events(tmp_path / "ref")
    rename = {"mine": "ref"}
    assert [(rename.get(d, d), *rest) for d, *rest in mine] == theirs
    with pytest.raises(NotImplementedError, match="SummaryWriter.add_graph is not supported"):
        SummaryWriter(log_dir=str(tmp_path / "x")).add_graph(ember.nn.Linear(1, 1))


def test_tensorboard_module_needs_the_tensorboard_package():
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        with pytest.raises(ModuleNotFoundError, match="No module named 'tensorboard'"):
            import ember.utils.tensorboard  # noqa: F401
    else:
        import ember.utils.tensorboard as tb
        assert tb.SummaryWriter.__name__ == "SummaryWriter"
