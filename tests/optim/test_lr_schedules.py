"""The schedulers of ``ember/optim/_schedules.py`` against PyTorch's: the lr (and momentum)
of every epoch, explicit ``step(epoch)``, state-dict round trips and PyTorch's errors."""
import warnings

import pytest

import ember

torch = pytest.importorskip("torch")


def _opt(lib, name="SGD", **kwargs):
    a = lib.zeros(2, requires_grad=True)
    b = lib.zeros(3, requires_grad=True)
    kwargs = dict(kwargs) or ({"momentum": 0.9} if name == "SGD" else {})
    return getattr(lib.optim, name)([{"params": [a]}, {"params": [b], "lr": 0.05}], lr=0.1,
                                    **kwargs)


def _sched(lib, make, opt_name="SGD"):
    opt = _opt(lib, opt_name)
    return opt, make(lib.optim.lr_scheduler, opt)


MAKERS = {
    "multiplicative": lambda L, o: L.MultiplicativeLR(o, lambda e: 0.9 if e % 2 else 0.95),
    "constant": lambda L, o: L.ConstantLR(o, factor=0.5, total_iters=4),
    "linear": lambda L, o: L.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=6),
    "polynomial": lambda L, o: L.PolynomialLR(o, total_iters=8, power=2.0),
    "one_cycle": lambda L, o: L.OneCycleLR(o, max_lr=[0.5, 0.2], total_steps=20),
    "one_cycle_3": lambda L, o: L.OneCycleLR(o, max_lr=1.0, epochs=4, steps_per_epoch=5,
                                             anneal_strategy="linear", three_phase=True),
    "cyclic": lambda L, o: L.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=3,
                                      step_size_down=5),
    "cyclic2": lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=2, mode="triangular2"),
    "cyclic_exp": lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=4, mode="exp_range",
                                          gamma=0.9, base_momentum=0.7),
    "cyclic_fn": lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=2,
                                         scale_fn=lambda x: 1 / (1 + x), scale_mode="iterations",
                                         cycle_momentum=False),
    "warm_restarts": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2,
                                                                eta_min=0.001),
    "sequential": lambda L, o: L.SequentialLR(
        o, [L.LinearLR(o, start_factor=0.1, total_iters=4), L.ExponentialLR(o, gamma=0.9),
            L.StepLR(o, 3)], milestones=[4, 9]),
    "chained": lambda L, o: L.ChainedScheduler([L.ConstantLR(o, factor=0.1, total_iters=3),
                                                L.ExponentialLR(o, gamma=0.9)]),
}


def _trace(lib, make, opt_name="SGD", steps=19):
    opt, sched = _sched(lib, make, opt_name)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(steps):
            opt.step()
            sched.step()
            out.append((sched.get_last_lr(), [g.get("momentum", g.get("betas"))
                                              for g in opt.param_groups]))
    return out


@pytest.mark.parametrize("name", MAKERS)
def test_lrs_and_momenta_match_torch(name):
    ours, theirs = _trace(ember, MAKERS[name]), _trace(torch, MAKERS[name])
    assert _close(ours, theirs)


def _close(a, b):
    assert len(a) == len(b)
    for (lr_a, m_a), (lr_b, m_b) in zip(a, b):
        assert lr_a == pytest.approx(lr_b, rel=1e-12, abs=1e-15)
        flat = lambda ms: [x for m in ms for x in (m if isinstance(m, tuple) else (m,))]  # noqa: E731
        assert flat(m_a) == pytest.approx(flat(m_b), rel=1e-12)
    return True


def test_one_cycle_cycles_adams_beta1():
    make = lambda L, o: L.OneCycleLR(o, max_lr=0.3, total_steps=12)  # noqa: E731
    assert _close(_trace(ember, make, "Adam", 11), _trace(torch, make, "Adam", 11))


def test_one_cycle_past_its_total_steps_raises_torchs_error():
    msgs = []
    for lib in (ember, torch):
        opt, sched = _sched(lib, lambda L, o: L.OneCycleLR(o, max_lr=0.1, total_steps=3))
        with pytest.raises(ValueError) as err:
            for _ in range(4):
                opt.step()
                sched.step()
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("epochs", [[0.5, 1.7, 3, 4.25, 10, 22.5], [2, 9, 1]])
def test_warm_restarts_explicit_epochs(epochs):
    runs = []
    for lib in (ember, torch):
        opt, sched = _sched(lib, MAKERS["warm_restarts"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs.append([(sched.step(e), sched.get_last_lr(), sched.T_i, sched.T_cur)[1:]
                         for e in epochs])
    for a, b in zip(*runs):
        assert a[0] == pytest.approx(b[0], rel=1e-12) and a[1:] == pytest.approx(b[1:])


@pytest.mark.parametrize("name", ["constant", "linear", "polynomial"])
def test_closed_forms_match_torch(name):
    runs = []
    for lib in (ember, torch):
        opt, sched = _sched(lib, MAKERS[name])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs.append([(sched.step(e), sched.get_last_lr())[1] for e in (3, 1, 7, 12, 0)])
    for a, b in zip(*runs):
        assert a == pytest.approx(b, rel=1e-12)


@pytest.mark.parametrize("name", ["sequential", "chained", "one_cycle", "warm_restarts",
                                  "cyclic2"])
def test_state_dict_round_trip(name):
    make = MAKERS[name]
    opt, sched = _sched(ember, make)
    for _ in range(5):
        opt.step()
        sched.step()
    state = sched.state_dict()
    opt2, sched2 = _sched(ember, make)
    sched2.load_state_dict(state)
    for group, group2 in zip(opt.param_groups, opt2.param_groups):
        group2["lr"] = group["lr"]
    for _ in range(5):
        opt.step()
        sched.step()
        opt2.step()
        sched2.step()
        assert sched2.get_last_lr() == sched.get_last_lr()


ERRORS = [
    lambda L, o: L.ConstantLR(o, factor=1.5),
    lambda L, o: L.LinearLR(o, start_factor=0),
    lambda L, o: L.LinearLR(o, end_factor=2),
    lambda L, o: L.MultiplicativeLR(o, [lambda e: 1.0]),
    lambda L, o: L.OneCycleLR(o, max_lr=0.1),
    lambda L, o: L.OneCycleLR(o, max_lr=0.1, total_steps=0),
    lambda L, o: L.OneCycleLR(o, max_lr=0.1, epochs=2, steps_per_epoch=-1),
    lambda L, o: L.OneCycleLR(o, max_lr=0.1, total_steps=5, pct_start=1),
    lambda L, o: L.OneCycleLR(o, max_lr=0.1, total_steps=5, anneal_strategy="exp"),
    lambda L, o: L.OneCycleLR(o, max_lr=[0.1], total_steps=5),
    lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=1.5),
    lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"),
    lambda L, o: L.SequentialLR(o, [], milestones=[]),
    lambda L, o: L.SequentialLR(o, [L.StepLR(o, 2)], milestones=[3]),
    lambda L, o: L.SequentialLR(o, [L.StepLR(o, 2), L.ReduceLROnPlateau(o)], milestones=[3]),
    lambda L, o: L.ChainedScheduler([]),
    lambda L, o: L.CyclicLR(o, 0.01, 0.1, mode="cosine"),
    lambda L, o: L.CyclicLR(o, [0.01], 0.1),
]


@pytest.mark.parametrize("make", ERRORS)
def test_errors_match_torch(make):
    got = []
    for lib in (ember, torch):
        with pytest.raises((ValueError, TypeError)) as err:
            make(lib.optim.lr_scheduler, _opt(lib))
        got.append((type(err.value), str(err.value)))
    assert got[0] == got[1]


def test_multiplicative_lambda_type_error():
    got = []
    for lib in (ember, torch):
        with pytest.raises(TypeError) as err:
            lib.optim.lr_scheduler.MultiplicativeLR(_opt(lib), [1, 2])
        got.append(str(err.value))
    assert got[0] == got[1]
