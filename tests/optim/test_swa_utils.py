"""``optim.swa_utils`` (AveragedModel, update_bn, SWALR, the averaging functions) against
PyTorch: the same models, updated the same way, must hold the same numbers."""
import warnings

import numpy as np
import pytest

import ember
from tests.conftest import to_np


def _model(lib, dtype):
    """A small net with a batch norm (buffers, including the long num_batches_tracked),
    weights set from fixed numbers so both libraries start equal."""
    m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(),
                          lib.nn.Linear(4, 2)).to(dtype)
    rng = np.random.default_rng(0)
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
    return m


def _train_a_bit(lib, model, step):
    """Move the weights and the batch-norm statistics deterministically."""
    rng = np.random.default_rng(100 + step)
    with lib.no_grad():
        for p in model.parameters():
            p.add_(lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype) * 0.1)
    model.train()
    model(lib.tensor(rng.standard_normal((5, 3)), dtype=model[0].weight.dtype))


def _state(module):
    return {k: to_np(v) for k, v in module.state_dict().items()}


def _averaged(lib, dtype, steps=4, **kwargs):
    sw = lib.optim.swa_utils
    fns = {"ema_multi": lambda: {"multi_avg_fn": sw.get_ema_multi_avg_fn(0.9)},
           "ema": lambda: {"avg_fn": sw.get_ema_avg_fn(0.8)},
           "swa_multi": lambda: {"multi_avg_fn": sw.get_swa_multi_avg_fn()},
           "swa": lambda: {"avg_fn": sw.get_swa_avg_fn()},
           None: dict}
    extra = fns[kwargs.pop("fn", None)]()
    model = _model(lib, dtype)
    avg = sw.AveragedModel(model, **extra, **kwargs)
    for step in range(steps):
        _train_a_bit(lib, model, step)
        avg.update_parameters(model)
    return avg


@pytest.mark.parametrize("fn,use_buffers,dtype", [
    (fn, use_buffers, "float64") for fn in (None, "ema_multi", "ema", "swa_multi", "swa")
    for use_buffers in (False, True)] + [(None, False, "float32"), ("ema_multi", True, "float32")])
def test_averaged_model_matches_torch(torch, fn, use_buffers, dtype):
    if fn == "swa_multi" and use_buffers:  # the long num_batches_tracked meets addcdiv_
        with pytest.raises(RuntimeError) as want:
            _averaged(torch, getattr(torch, dtype), fn=fn, use_buffers=use_buffers)
        with pytest.raises(RuntimeError) as got:
            _averaged(ember, getattr(ember, dtype), fn=fn, use_buffers=use_buffers)
        assert str(got.value) == str(want.value)
        return
    got = _averaged(ember, getattr(ember, dtype), fn=fn, use_buffers=use_buffers)
    want = _averaged(torch, getattr(torch, dtype), fn=fn, use_buffers=use_buffers)
    g, w = _state(got), _state(want)
    assert list(g) == list(w)
    for k in w:
        assert g[k].dtype == w[k].dtype, k
        np.testing.assert_allclose(g[k], w[k], rtol=1e-6 if dtype == "float32" else 1e-13,
                                   atol=1e-7 if dtype == "float32" else 1e-15, err_msg=k)
    assert got.n_averaged.item() == want.n_averaged.item() == 4
    x = np.ones((2, 3))
    got.eval()
    want.eval()
    np.testing.assert_allclose(to_np(got(ember.tensor(x, dtype=getattr(ember, dtype)))),
                               to_np(want(torch.tensor(x, dtype=getattr(torch, dtype)))),
                               rtol=1e-5)


def test_averaged_model_is_a_copy_and_checks_arguments(torch):
    model = _model(ember, ember.float32)
    avg = ember.optim.swa_utils.AveragedModel(model)
    assert avg.module is not model and avg.module[0].weight is not model[0].weight
    assert list(avg.state_dict())[:2] == ["n_averaged", "module.0.weight"]
    tavg = torch.optim.swa_utils.AveragedModel(_model(torch, torch.float32))
    assert list(avg.state_dict()) == list(tavg.state_dict())
    assert repr(avg) == repr(tavg)
    sw, tsw = ember.optim.swa_utils, torch.optim.swa_utils
    for lib_sw, lib_model in ((sw, model), (tsw, _model(torch, torch.float32))):
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
            lib_sw.AveragedModel(lib_model, avg_fn=lib_sw.get_swa_avg_fn(),
                                 multi_avg_fn=lib_sw.get_swa_multi_avg_fn())
    for bad in (-0.1, 1.5):
        for f in ("get_ema_avg_fn", "get_ema_multi_avg_fn"):
            with pytest.raises(ValueError) as want:
                getattr(tsw, f)(bad)
            with pytest.raises(ValueError) as got:
                getattr(sw, f)(bad)
            assert str(got.value) == str(want.value)


def test_update_bn_matches_torch(torch):
    def run(lib):
        model = _model(lib, lib.float64)
        model.eval()
        momentum = model[1].momentum
        rng = np.random.default_rng(7)
        loader = [(lib.tensor(rng.standard_normal((4, 3))), lib.zeros(4)) for _ in range(3)]
        loader.append(lib.tensor(rng.standard_normal((2, 3))))  # a bare tensor batch
        lib.optim.swa_utils.update_bn(loader, model)
        return _state(model), model.training, model[1].momentum == momentum
    got, want = run(ember), run(torch)
    assert got[1:] == want[1:] == (False, True)
    for k in want[0]:
        np.testing.assert_allclose(got[0][k], want[0][k], rtol=1e-12, err_msg=k)


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 3])
@pytest.mark.parametrize("swa_lr", [0.05, [0.05, 0.5]])
def test_swalr_schedule_matches_torch(torch, strategy, anneal_epochs, swa_lr):
    def run(lib):
        w = lib.zeros(1, requires_grad=True)
        opt = lib.optim.SGD([{"params": [w]}, {"params": [lib.zeros(1, requires_grad=True)],
                                                "lr": 0.3}], lr=1.0)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=swa_lr, anneal_epochs=anneal_epochs,
                                          anneal_strategy=strategy)
        lrs = [sched.get_last_lr()]
        for _ in range(5):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
        state = sched.state_dict()
        return lrs, sorted(state), state["_anneal_strategy"]
    got, want = run(ember), run(torch)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    assert got[2] == want[2]
    assert "optimizer" not in got[1] and "anneal_func" not in got[1]


@pytest.mark.parametrize("kwargs", [{"anneal_strategy": "exp"}, {"anneal_epochs": -1},
                                    {"anneal_epochs": 2.0}, {"swa_lr": [0.1, 0.2]}])
def test_swalr_errors(torch, kwargs):
    def make(lib):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
        lib.optim.swa_utils.SWALR(opt, **{"swa_lr": 0.1, **kwargs})
    with pytest.raises(ValueError) as want:
        make(torch)
    with pytest.raises(ValueError) as got:
        make(ember)
    assert str(got.value) == str(want.value)


def test_swalr_load_state_dict_restores_the_anneal_function(torch):
    opt = ember.optim.SGD([ember.zeros(1, requires_grad=True)], lr=1.0)
    a = ember.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_strategy="linear")
    b = ember.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_strategy="cos")
    b.load_state_dict(a.state_dict())
    assert b.anneal_func(0.25) == 0.25
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        b.get_lr()
    assert "get_last_lr()" in str(caught[0].message)
