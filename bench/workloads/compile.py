"""``compile``: ember's ``torch.compile`` (record once, replay the array calls) against
PyTorch eager and the hand-written NumPy floor.

The ``overhead`` chains (per op), the ``mlp`` SGD step (batch 1, 64, 1024), the ``cnn`` SGD
step, makemore's bigram, MLP and GRU AdamW steps (``makemore.py``) and a Hessian-vector
product (``hvp``: a 64-128-10 tanh MLP's cross-entropy, batch 32, by double backward), each
written as one function that ``ember.compile`` compiles: for a step, zero_grad, forward,
cross-entropy, backward and the optimizer's step; for the HVP, ``grad(loss, params,
create_graph=True)`` then ``grad(sum(g * v), params)``. PyTorch runs eagerly (its
``torch.compile`` takes 15-80 s to compile these on a CPU: see BENCHMARKS.md;
``--torch-compile`` times its compiled steps too, and prints their first call's time). The
ember contender is the compiled function; ``ember eager`` is timed beside it as a reference.
The first call's time (the recording) is printed, and the time of a check of the step's
guard.
"""
from __future__ import annotations

import os
import time
import timeit

import numpy as np

from bench.harness import Case, Contender, Target
from bench.workloads import cnn, lm, makemore, mlp, overhead
from bench.workloads.common import (
    build_mlp,
    layer_init,
    load_params,
    mlp_data,
    mlp_grad_names,
    training_contender,
)

OVERHEAD_TARGETS = {"mul/add": 0.15, "exp/tanh/sigmoid": 0.25}  # compiled / PyTorch eager
MLP_TARGETS = (1.1, 1.0, 1.02)  # compiled / NumPy floor, per batch
CNN_TARGET = cnn.TARGET  # (the issue sets none: eager's, against the NumPy floor)
MAKEMORE = ("bigram", "mlp", "gru")  # the small real-program workloads: <= 0.5x PyTorch eager
HVP_SIZES, HVP_BATCH, HVP_QUICK_BATCH = (64, 128, 10), 32, 8


def _first_call(fn, what):
    start = time.perf_counter()
    fn()
    print(f"[{what}: recorded in {(time.perf_counter() - start) * 1e3:.1f} ms"
          f"{_guard_cost(fn)}] ", end="", flush=True)


def _guard_cost(fn):
    """``; guard N us``: the time ember's check of the guard of ``fn``'s (argument-less)
    compiled step takes, after two more calls have recorded what the step's calls need (a
    call with ``.grad`` set is recorded apart from the first); "" for PyTorch's."""
    runner = getattr(fn, "_ember_runner", None)
    if runner is None:
        return ""
    fn(), fn()
    checks = [g for g, replay in runner.entries.items() if replay is not None]
    if not checks:
        return "; no replay"
    cost = min(timeit.repeat(lambda: checks[-1].check((), {}), number=2000, repeat=5)) / 2000
    return f"; guard {cost * 1e6:.1f} us"


def overhead_contender(lib, kind, x0, w0):
    x = lib.tensor(x0, requires_grad=True)
    w = lib.tensor(w0, requires_grad=True)

    def step():
        x.grad = w.grad = None
        loss = overhead.chain(lib, kind, x, w).sum()
        loss.backward()
        return loss

    compiled = lib.compile(step)
    _first_call(compiled, kind)

    def evaluate():
        loss = compiled()
        return {"loss": loss.item(), "x.grad": x.grad.numpy(), "w.grad": w.grad.numpy()}

    return Contender(compiled, evaluate)


def timed_first_check(contender):
    """``contender`` whose first ``evaluate`` (the check's, before any timing: the
    recording) prints its time."""
    evaluate, first = contender.evaluate, [True]

    def timed():
        if not first[0]:
            return evaluate()
        first[0] = False
        start = time.perf_counter()
        out = evaluate()
        recorded = time.perf_counter() - start
        out = {k: np.array(v) for k, v in out.items()}  # (the steps below accumulate into .grad)
        print(f"[recorded in {recorded * 1e3:.1f} ms{_guard_cost(contender.step)}] ", end="",
              flush=True)
        return out
    return Contender(contender.step, timed)


def mlp_contender(lib, params, x0, y0):
    model = build_mlp(lib, params)
    return timed_first_check(training_contender(lib, model, x0, y0,
                                                mlp_grad_names(len(params)), mlp.LR, True))


def _torch_compiled(libs, build):
    """``{"torch.compile": build}`` when ``bench/run.py --torch-compile`` asked for PyTorch's
    compiled steps (each compiles for tens of seconds on a CPU), else nothing."""
    if "torch" in libs and os.environ.get("BENCH_TORCH_COMPILE") == "1":
        return {"torch.compile": build}
    return {}


def hvp_contender(lib, arrays, x0, y0, v0, compiled=False):
    """A Hessian-vector product of a tanh MLP's loss by double backward, in ember or
    PyTorch; ``compiled``: through ``lib.compile``. Returns the loss, the gradients and
    ``H v`` (detached: a replay keeps no graph)."""
    n_in, n_hidden, n_out = HVP_SIZES
    model = lib.nn.Sequential(lib.nn.Linear(n_in, n_hidden), lib.nn.Tanh(),
                              lib.nn.Linear(n_hidden, n_out))
    load_params(lib, model, arrays)
    weights = list(model.parameters())
    x, y = lib.tensor(x0), lib.tensor(y0)
    v = [lib.tensor(a) for a in v0]
    cross_entropy_ = lib.nn.functional.cross_entropy

    def step():
        loss = cross_entropy_(model(x), y)
        grads = lib.autograd.grad(loss, weights, create_graph=True)
        hv = lib.autograd.grad(sum((g * vi).sum() for g, vi in zip(grads, v)), weights)
        return loss.detach(), [g.detach() for g in grads], hv

    if compiled:
        step = lib.compile(step)

    def evaluate():
        loss, grads, hv = step()
        names = mlp_grad_names(2)
        return {"loss": loss.item(), **{n: g.numpy() for n, g in zip(names, grads)},
                **{"Hv." + n: h.numpy() for n, h in zip(names, hv)}}

    contender = Contender(step, evaluate)
    return timed_first_check(contender) if compiled else contender


def hvp_case(libs, quick):
    ember = libs["ember"]
    rng = np.random.default_rng(3)
    batch = HVP_QUICK_BATCH if quick else HVP_BATCH
    pairs = [layer_init(rng, (n_out, n_in)) for n_in, n_out in zip(HVP_SIZES, HVP_SIZES[1:])]
    arrays = [a for pair in pairs for a in pair]
    x = rng.standard_normal((batch, HVP_SIZES[0]), dtype=np.float32)
    y = rng.integers(0, HVP_SIZES[-1], batch)
    v = [rng.standard_normal(a.shape, dtype=np.float32) for a in arrays]
    contenders = {"ember": lambda: hvp_contender(ember, arrays, x, y, v, True)}
    if "torch" in libs:
        contenders["torch"] = lambda: hvp_contender(libs["torch"], arrays, x, y, v)
    return Case("compile", f"hvp batch {batch}", "ms/step", contenders, Target("torch", 0.5),
                references={"ember eager": lambda: hvp_contender(ember, arrays, x, y, v),
                            **_torch_compiled(libs, lambda: hvp_contender(
                                libs["torch"], arrays, x, y, v, True))})


def cases(libs, quick):
    ember = libs["ember"]
    out = []
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal(3).astype(np.float32)
    w0 = rng.uniform(0.5, 1.0, 3).astype(np.float32)
    for kind in overhead.KINDS:
        contenders = {"ember": lambda kind=kind: overhead_contender(ember, kind, x0, w0)}
        if "torch" in libs:
            contenders["torch"] = (lambda kind=kind:
                                   overhead.autograd_contender(libs["torch"], kind, x0, w0))
        contenders["numpy"] = lambda kind=kind: overhead.numpy_contender(kind, x0, w0)
        refs = {"ember eager": lambda kind=kind: overhead.autograd_contender(ember, kind, x0,
                                                                             w0),
                **_torch_compiled(libs, lambda kind=kind: overhead_contender(
                    libs["torch"], kind, x0, w0))}
        out.append(Case("compile", f"overhead {kind}", "us/op", contenders,
                        Target("torch", OVERHEAD_TARGETS[kind]), per=overhead.N_OPS,
                        references=refs))
    sizes, batches = (mlp.QUICK_SIZES, mlp.QUICK_BATCHES) if quick else (mlp.SIZES, mlp.BATCHES)
    for batch, ratio in zip(batches, MLP_TARGETS):
        params, x, y = mlp_data(batch, sizes, batch)
        contenders = {"ember": (lambda params=params, x=x, y=y:
                                mlp_contender(ember, params, x, y))}
        if "torch" in libs:
            contenders["torch"] = (lambda params=params, x=x, y=y:
                                   mlp.autograd_contender(libs["torch"], params, x, y))
        contenders["numpy"] = lambda params=params, x=x, y=y: mlp.numpy_contender(params, x, y)
        refs = {"ember eager": (lambda params=params, x=x, y=y:
                                mlp.autograd_contender(ember, params, x, y)),
                **_torch_compiled(libs, lambda params=params, x=x, y=y:
                                  mlp_contender(libs["torch"], params, x, y))}
        out.append(Case("compile", f"mlp batch {batch}", "ms/step", contenders,
                        Target("numpy", ratio), references=refs))
    size = cnn.QUICK if quick else cnn.FULL
    data = cnn.cnn_data(0, size["batch"], size["side"])
    contenders = {"ember": lambda: timed_first_check(cnn.autograd_contender(ember, *data, True))}
    if "torch" in libs:
        contenders["torch"] = lambda: cnn.autograd_contender(libs["torch"], *data)
    contenders["numpy"] = lambda: cnn.numpy_contender(*data)
    out.append(Case("compile", f"cnn batch {size['batch']}", "ms/step", contenders,
                    Target("numpy", CNN_TARGET),
                    references={"ember eager": lambda: cnn.autograd_contender(ember, *data),
                                **_torch_compiled(libs, lambda: timed_first_check(
                                    cnn.autograd_contender(libs["torch"], *data, True)))}))
    size = makemore.QUICK if quick else makemore.FULL
    x, y = lm.token_data(0, size["batch"], size["block"], size["vocab"], padded=True)
    for seed, model in enumerate(makemore.MODELS, start=1):
        if model not in MAKEMORE:
            continue
        make_model = makemore.BUILDERS[model](size)
        arrays = lm.init_arrays(seed, make_model(ember))

        def contender(lib, compiled=False, make_model=make_model, arrays=arrays):
            return lambda: lm.training_contender(lib, make_model, arrays, x, y,
                                                 makemore.TRAIN, compiled)
        compiled = contender(ember, True)
        contenders = {"ember": lambda build=compiled: timed_first_check(build())}
        if "torch" in libs:
            contenders["torch"] = contender(libs["torch"])
        out.append(Case("compile", f"makemore {model}", "ms/step", contenders,
                        Target("torch", 0.5),
                        references={"ember eager": contender(ember),
                                    **_torch_compiled(libs, contender(libs.get("torch"), True))}))
    out.append(hvp_case(libs, quick))
    return out
