"""Optimizers and LR schedulers against PyTorch: same parameters, same gradients, same steps."""
import warnings
from functools import partial

import numpy as np
import pytest

import ember
from ember import optim

from ..oracle import raised

torch = pytest.importorskip("torch")

SHAPES = [(3, 4), (5,), ()]


def _run(lib, opt_name, make_groups, kwargs, steps=20, seed=0):
    rng = np.random.default_rng(seed)
    inits = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(steps)]
    params = [lib.tensor(a, requires_grad=True) for a in inits]
    opt = getattr(lib.optim, opt_name)(make_groups(params), **kwargs)
    for k in range(steps):
        for p, g in zip(params, grads[k]):
            p.grad = lib.tensor(g)
        opt.step()
    return [p.detach().numpy().copy() for p in params], opt


def _flat(params):
    return params


def _groups(params):
    return [{"params": params[:2]}, {"params": params[2:], "lr": 0.05}]


CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True, maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.02, weight_decay=0.5, amsgrad=True)),
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, centered=True, maximize=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adagrad", dict(lr=0.1, eps=1e-5, maximize=True)),
]


@pytest.mark.parametrize("grouping", [_flat, _groups], ids=["flat", "groups"])
@pytest.mark.parametrize("name,kwargs", CASES)
def test_matches_torch(name, kwargs, grouping):
    ours, opt_e = _run(ember, name, grouping, kwargs)
    theirs, opt_t = _run(torch, name, grouping, kwargs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    se, st = opt_e.state_dict(), opt_t.state_dict()
    assert se["param_groups"] == st["param_groups"]
    assert se["state"].keys() == st["state"].keys()
    for i in st["state"]:
        assert list(se["state"][i]) == list(st["state"][i])
        for k, v in st["state"][i].items():
            np.testing.assert_allclose(se["state"][i][k].numpy(), v.numpy(), rtol=1e-5,
                                       atol=1e-5)
            assert str(se["state"][i][k].dtype) == str(v.dtype)


@pytest.mark.parametrize("name,kwargs", [c for c in CASES if c[0] != "SGD" or c[1].get("momentum")])
def test_state_dict_round_trip(name, kwargs):
    """10 steps, save, load into a fresh optimizer, 10 more: same as 20 uninterrupted steps."""
    rng = np.random.default_rng(1)
    inits = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(20)]

    def train(params, opt, ks):
        for k in ks:
            for p, g in zip(params, grads[k]):
                p.grad = ember.tensor(g)
            opt.step()

    cls = getattr(optim, name)
    ref = [ember.tensor(a, requires_grad=True) for a in inits]
    opt = cls(ref, **kwargs)
    train(ref, opt, range(20))

    params = [ember.tensor(a, requires_grad=True) for a in inits]
    opt1 = cls(params, **kwargs)
    train(params, opt1, range(10))
    sd = opt1.state_dict()
    opt2 = cls(params, **kwargs)
    opt2.load_state_dict(sd)
    # the loaded state is a copy: stepping opt2 leaves opt1's state alone
    before = {i: {k: v.numpy().copy() for k, v in s.items()} for i, s in sd["state"].items()}
    train(params, opt2, range(10, 20))
    for i, s in opt1.state_dict()["state"].items():
        for k, v in s.items():
            np.testing.assert_array_equal(v.numpy(), before[i][k])
    for a, b in zip(params, ref):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_zero_grad_and_closure():
    p = ember.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss) == 5.0
    np.testing.assert_allclose(p.detach().numpy(), [0.8, 1.6], rtol=1e-6)
    assert p.grad is not None and p.requires_grad and p.is_leaf
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(p.grad.numpy(), [0.0, 0.0])
    opt.zero_grad()
    assert p.grad is None
    opt.step()  # no grads: nothing happens
    np.testing.assert_allclose(p.detach().numpy(), [0.8, 1.6], rtol=1e-6)


def test_add_param_group_and_repr():
    for lib in (ember, torch):
        a = lib.zeros(2, requires_grad=True)
        b = lib.zeros(3, requires_grad=True)
        opt = lib.optim.SGD([a], lr=0.1, momentum=0.9)
        opt.add_param_group({"params": b, "lr": 0.01})
        assert opt.param_groups[1]["momentum"] == 0.9
        assert opt.param_groups[1]["params"][0] is b
    e = optim.Adam([ember.zeros(2, requires_grad=True)], lr=0.1)
    t = torch.optim.Adam([torch.zeros(2, requires_grad=True)], lr=0.1)
    assert repr(e) == repr(t)


# what ``fn()`` raised, by exception class (not only its name) and message; None if it returned
_err = partial(raised, exact_type=True)


@pytest.mark.parametrize("build", [
    lambda L: L.optim.SGD(L.zeros(2, requires_grad=True)),
    lambda L: L.optim.SGD([]),
    lambda L: L.optim.SGD([1.0]),
    lambda L: L.optim.SGD([L.zeros(2, requires_grad=True) * 2]),
    lambda L: L.optim.SGD({L.zeros(2, requires_grad=True)}),
    lambda L: L.optim.SGD([L.zeros(2, requires_grad=True)], lr=-1),
    lambda L: L.optim.SGD([L.zeros(2, requires_grad=True)], momentum=-1),
    lambda L: L.optim.SGD([L.zeros(2, requires_grad=True)], weight_decay=-1),
    lambda L: L.optim.SGD([L.zeros(2, requires_grad=True)], nesterov=True),
    lambda L: L.optim.Adam([L.zeros(2, requires_grad=True)], betas=(1.0, 0.9)),
    lambda L: L.optim.Adam([L.zeros(2, requires_grad=True)], betas=(0.9, -0.1)),
    lambda L: L.optim.Adam([L.zeros(2, requires_grad=True)], eps=-1),
    lambda L: L.optim.AdamW([L.zeros(2, requires_grad=True)], lr=-0.5),
    lambda L: L.optim.RMSprop([L.zeros(2, requires_grad=True)], alpha=-1),
    lambda L: L.optim.Adagrad([L.zeros(2, requires_grad=True)], lr_decay=-1),
    lambda L: L.optim.Adagrad([L.zeros(2, requires_grad=True)], initial_accumulator_value=-1),
])
def test_constructor_errors(build):
    assert _err(lambda: build(ember)) == _err(lambda: build(torch))


def test_param_group_errors():
    for_both = []
    for lib in (ember, torch):
        a = lib.zeros(2, requires_grad=True)
        opt = lib.optim.SGD([a], lr=0.1)
        errs = [_err(lambda: opt.add_param_group({"params": [a]})),
                _err(lambda: opt.add_param_group([a])),
                _err(lambda: lib.optim.SGD([{"params": [a]}], lr=lib.optim.Optimizer)),
                _err(lambda: opt.load_state_dict({"state": {}, "param_groups": []})),
                _err(lambda: opt.load_state_dict(
                    {"state": {}, "param_groups": [{"params": [0, 1], "lr": 0.1}]}))]
        assert len(opt.param_groups) == 1
        for_both.append(errs)
    assert for_both[0][:2] == for_both[1][:2]
    assert for_both[0][3:] == for_both[1][3:]


def test_step_runs_without_recording_graph():
    p = ember.tensor([1.0, 2.0], requires_grad=True)
    p.grad = ember.tensor([1.0, 1.0])
    v = p._version
    optim.Adam([p], lr=0.1).step()
    assert p.is_leaf and p.grad_fn is None and p._version == v + 1


def _versions(lib, name, kwargs):
    """The version counters of a parameter and of its state tensors after each of 3 steps."""
    p = lib.tensor(np.ones(3, dtype=np.float32), requires_grad=True)
    view = p.detach()[1:]  # shares the parameter's storage
    opt = getattr(lib.optim, name)([p], **kwargs)
    out = []
    for k in range(3):
        p.grad = lib.tensor(np.full(3, 0.5 + k, dtype=np.float32))
        opt.step()
        out.append((p._version, {key: v._version for key, v in opt.state[p].items()},
                    view.tolist()))
    return out


@pytest.mark.parametrize("name,kwargs", CASES + [("AdamW", dict(lr=0.01, weight_decay=0))])
def test_updates_in_place_with_pytorchs_version_counts(name, kwargs):
    """Each in-place op of PyTorch's step (``add_``, ``mul_``, ``addcdiv_``...) bumps its
    tensor's version once: the parameter, the step count and the running averages."""
    ours, theirs = _versions(ember, name, kwargs), _versions(torch, name, kwargs)
    assert [v[:2] for v in ours] == [v[:2] for v in theirs]
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a[2], b[2], rtol=1e-6)


# ---------------------------------------------------------------------- schedulers
SCHEDULERS = [
    ("StepLR", dict(step_size=7, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[3, 10, 10, 25], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=10, eta_min=0.001)),
    ("CosineAnnealingLR", dict(T_max=7)),
    ("LambdaLR", dict(lr_lambda=lambda e: 1.0 / (e + 1))),
]


def _sched_run(lib, name, kwargs, epochs=30):
    a = lib.zeros(2, requires_grad=True)
    b = lib.zeros(2, requires_grad=True)
    opt = lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.3}], lr=0.1, momentum=0.9)
    sched = getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
    lrs = [sched.get_last_lr()]
    for _ in range(epochs):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
    return lrs, opt, sched


@pytest.mark.parametrize("name,kwargs", SCHEDULERS)
def test_scheduler_matches_torch(name, kwargs):
    ours, opt_e, sched_e = _sched_run(ember, name, kwargs)
    theirs, opt_t, sched_t = _sched_run(torch, name, kwargs)
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-12)
    assert [g["initial_lr"] for g in opt_e.param_groups] == \
        [g["initial_lr"] for g in opt_t.param_groups]
    assert sched_e.last_epoch == sched_t.last_epoch


def _plateau_run(lib, kwargs):
    a = lib.zeros(2, requires_grad=True)
    b = lib.zeros(2, requires_grad=True)
    opt = lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.3}], lr=0.1)
    sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.89, 0.9, 0.9, 0.9, 0.9, 0.9, 0.5, 0.5, 0.5,
               0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4]
    lrs = []
    for m in metrics:
        opt.step()
        sched.step(m)
        lrs.append(sched.get_last_lr())
    return lrs


@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(patience=2),
    dict(mode="max", factor=0.5, patience=1, cooldown=2),
    dict(factor=0.5, patience=1, threshold=0.1, threshold_mode="abs", min_lr=0.02),
    dict(factor=0.2, patience=0, cooldown=1, min_lr=[0.001, 0.05]),
])
def test_plateau_matches_torch(kwargs):
    np.testing.assert_allclose(np.array(_plateau_run(ember, kwargs)),
                               np.array(_plateau_run(torch, kwargs)), rtol=1e-12)


@pytest.mark.parametrize("bad", [dict(factor=1.0), dict(mode="avg"), dict(threshold_mode="x"),
                                 dict(min_lr=[0.1, 0.2])])
def test_plateau_errors(bad):
    assert _err(lambda: ember.optim.lr_scheduler.ReduceLROnPlateau(
        optim.SGD([ember.zeros(1, requires_grad=True)]), **bad)) == _err(
        lambda: torch.optim.lr_scheduler.ReduceLROnPlateau(
            torch.optim.SGD([torch.zeros(1, requires_grad=True)]), **bad))


def test_scheduler_type_error():
    assert _err(lambda: ember.optim.lr_scheduler.StepLR(object(), 3)) == \
        _err(lambda: torch.optim.lr_scheduler.StepLR(object(), 3))


def _warnings(lib, optimizer_first):
    opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
    sched = lib.optim.lr_scheduler.StepLR(opt, 2)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        if optimizer_first:
            opt.step()
        sched.step()
        sched.step()
    return [(w.category, str(w.message)) for w in rec]


@pytest.mark.parametrize("optimizer_first", [False, True])
def test_scheduler_order_warning(optimizer_first):
    ours, theirs = _warnings(ember, optimizer_first), _warnings(torch, optimizer_first)
    assert ours == theirs
    assert (len(ours) == 1) != optimizer_first


def test_get_lr_outside_step_warns():
    for lib in (ember, torch):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
        sched = lib.optim.lr_scheduler.StepLR(opt, 2)
        with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
            sched.get_lr()


def test_scheduler_state_dict():
    opt = optim.SGD([ember.zeros(1, requires_grad=True)], lr=0.1)
    sched = optim.lr_scheduler.StepLR(opt, 3, gamma=0.5)
    for _ in range(4):
        opt.step()
        sched.step()
    sd = sched.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 4
    sched2 = optim.lr_scheduler.StepLR(opt, 3)
    sched2.load_state_dict(sd)
    assert sched2.gamma == 0.5 and sched2.last_epoch == 4


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_large_parameter_update_is_one_pass_value_for_value(dtype, layout):
    # Parameters above the optimizers' update block are updated a block at a time through a
    # small buffer: every element must still be exactly p + (-lr * g), and match PyTorch.
    rng = np.random.default_rng(3)
    p0 = rng.standard_normal((400, 300)).astype(dtype)
    g0 = rng.standard_normal((400, 300)).astype(dtype)
    if layout == "transposed":  # a column-major parameter: not blocked, the same values
        p0, g0 = p0.T, g0.T
    out = {}
    for lib in (ember, torch):
        p = lib.tensor(p0, requires_grad=True)
        if layout == "transposed":
            p = lib.tensor(p0.T, requires_grad=True).t().detach().requires_grad_()
        p.grad = lib.tensor(g0)
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.01)
        for _ in range(2):
            opt.step()
        out[lib.__name__] = p.detach().numpy()
    d_p = g0 + 0.01 * p0                      # the first step: the buffer is d_p itself
    first = p0 + d_p * np.asarray(-0.1, dtype)
    d_p2 = g0 + 0.01 * first
    buf = d_p * 0.9 + d_p2                    # momentum_buffer.mul_(0.9).add_(d_p2)
    np.testing.assert_array_equal(out["ember"], first + buf * np.asarray(-0.1, dtype))
    np.testing.assert_allclose(out["ember"], out["torch"], rtol=1e-6, atol=1e-6)
