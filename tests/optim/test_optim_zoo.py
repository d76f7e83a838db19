"""Adafactor, Muon, SparseAdam and swap_in_optimizer_params_and_state against PyTorch:
trajectories over several steps, state_dict layout, argument errors."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

SHAPES = {"Adafactor": [(3, 4), (5,), (2, 3, 4), ()], "Muon": [(3, 4), (6, 2), (5, 5)]}
CONFIGS = {
    "Adafactor": [{}, {"lr": 0.1, "weight_decay": 0.1, "maximize": True},
                  {"eps": (1e-5, 1e-2), "d": 2.0, "beta2_decay": -0.5}],
    "Muon": [{}, {"lr": 0.02, "weight_decay": 0.0, "nesterov": False},
             {"adjust_lr_fn": "match_rms_adamw", "momentum": 0.3},
             {"ns_steps": 3, "ns_coefficients": (2.0, -1.5, 0.5)}],
}


def _run(lib, name, kwargs, dtype, steps=6, reload_at=None):
    rng = np.random.default_rng(0)
    dt = getattr(lib, dtype)
    params = [lib.tensor(rng.standard_normal(s), dtype=dt, requires_grad=True)
              for s in SHAPES[name]]
    opt = getattr(lib.optim, name)(params, **kwargs)
    for i in range(steps):
        for p in params:
            p.grad = lib.tensor(np.random.default_rng(i + 10).standard_normal(tuple(p.shape)),
                                dtype=dt)
        opt.step()
        if i == reload_at:  # a fresh optimizer from the state dict carries on the same
            state = opt.state_dict()
            opt = getattr(lib.optim, name)(params, **kwargs)
            opt.load_state_dict(state)
    return [p.detach().numpy() for p in params], opt.state_dict()


def _np(v):
    return v.numpy() if hasattr(v, "numpy") else np.asarray(v)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", [(n, k) for n, ks in CONFIGS.items() for k in ks])
def test_trajectory_and_state_dict_match_pytorch(name, kwargs, dtype):
    for reload_at in (None, 2):
        (pe, se), (pt, st) = (_run(lib, name, kwargs, dtype, reload_at=reload_at)
                              for lib in (ember, torch))
        tol = 1e-12 if dtype == "float64" else 1e-6
        for a, b in zip(pe, pt):
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
        assert se["param_groups"] == st["param_groups"]
        assert list(se["state"]) == list(st["state"])
        for k in st["state"]:
            assert list(se["state"][k]) == list(st["state"][k])
            for key, value in st["state"][k].items():
                mine = se["state"][k][key]
                assert type(mine).__name__ == type(value).__name__
                if hasattr(value, "dtype"):
                    assert str(mine.dtype) == str(value.dtype)
                    assert tuple(mine.shape) == tuple(value.shape)
                np.testing.assert_allclose(_np(mine), _np(value), rtol=tol, atol=tol)


def _error(lib, fn):
    try:
        fn(lib)
    except Exception as exc:  # noqa: BLE001 (the comparison is the point)
        return type(exc).__name__, str(exc)
    return None


def _p(lib, *shape):
    return [lib.zeros(*shape, requires_grad=True)]


@pytest.mark.parametrize("call", [
    lambda L: L.optim.Adafactor(_p(L, 2), lr=-1),
    lambda L: L.optim.Adafactor(_p(L, 2), beta2_decay=0.5),
    lambda L: L.optim.Adafactor(_p(L, 2), eps=(-1, 1e-3)),
    lambda L: L.optim.Adafactor(_p(L, 2), eps=(None, -1)),
    lambda L: L.optim.Adafactor(_p(L, 2), d=0.5),
    lambda L: L.optim.Adafactor(_p(L, 2), weight_decay=-1),
    lambda L: L.optim.Muon(_p(L, 2, 2), lr=-1),
    lambda L: L.optim.Muon(_p(L, 2, 2), momentum=-1),
    lambda L: L.optim.Muon(_p(L, 2, 2), weight_decay=-1),
    lambda L: L.optim.Muon(_p(L, 2, 2), adjust_lr_fn="x"),
    lambda L: L.optim.Muon(_p(L, 2)),
    lambda L: L.optim.SparseAdam(_p(L, 2), lr=0),
    lambda L: L.optim.SparseAdam(_p(L, 2), eps=0),
    lambda L: L.optim.SparseAdam(_p(L, 2), betas=(1.0, 0.9)),
    lambda L: L.optim.SparseAdam(_p(L, 2), betas=(0.9, -0.1)),
])
def test_constructor_errors_match_pytorch(call):
    assert _error(ember, call) == _error(torch, call)


def test_sparse_adam_refuses_dense_gradients_as_pytorch():
    def step(lib):
        p = lib.zeros(3, requires_grad=True)
        opt = lib.optim.SparseAdam([p])
        p.grad = lib.ones(3)
        opt.step()
    assert _error(ember, step) == _error(torch, step)
    assert repr(ember.optim.SparseAdam(_p(ember, 2))) == repr(torch.optim.SparseAdam(
        _p(torch, 2)))


def test_swap_in_optimizer_params_and_state():
    results = []
    for lib in (ember, torch):
        p = lib.tensor([1.0, 2.0], requires_grad=True)
        opt = lib.optim.Adam([p], lr=0.1)
        p.grad = lib.tensor([0.5, -0.5])
        opt.step()
        saved = opt.state_dict()
        other = lib.tensor([10.0, 20.0], requires_grad=True)
        other.grad = lib.tensor([1.0, 1.0])
        state = {"state": {0: {k: (v.clone() if hasattr(v, "clone") else v)
                               for k, v in saved["state"][0].items()}},
                 "param_groups": [dict(saved["param_groups"][0], lr=1.0)]}
        with lib.optim.swap_in_optimizer_params_and_state(opt, {"w": other}, state):
            assert opt.param_groups[0]["params"][0] is other
            assert opt.param_groups[0]["lr"] == 1.0
            opt.step()
        assert opt.param_groups[0]["params"][0] is p and opt.param_groups[0]["lr"] == 0.1
        assert float(opt.state[p]["step"]) == 1.0
        results.append((other.detach().numpy(), p.detach().numpy(),
                        state["state"][0]["exp_avg"].numpy()))
        bad = {"state": {0: {}}, "param_groups": [{"params": [0]}]}
        results.append(_error(lib, lambda L: L.optim.swap_in_optimizer_params_and_state(
            opt, {"w": other}, bad).__enter__()))
        fresh = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
        results.append(_error(lib, lambda L: L.optim.swap_in_optimizer_params_and_state(
            fresh, {}, saved).__enter__()))
    for a, b in zip(results[0], results[3]):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert results[1] == results[4] and results[2] == results[5]
