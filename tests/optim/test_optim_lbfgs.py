"""``optim.LBFGS`` against PyTorch: the same losses, parameters and state (every key, type
and value) after several steps, with and without the strong-Wolfe line search."""
import numpy as np
import pytest

import ember

from ..oracle import same_error

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad")


def _rosenbrock(x):
    return ((1 - x[:-1]) ** 2).sum() + 100 * ((x[1:] - x[:-1] ** 2) ** 2).sum()


def _run_rosenbrock(lib, kwargs, steps, dtype="float64", start=(-1.5, 2.0, 0.5, -0.3)):
    x = lib.tensor(start, dtype=getattr(lib, dtype), requires_grad=True)
    if kwargs.get("lr") == "tensor":
        kwargs = {**kwargs, "lr": lib.tensor([0.5], dtype=getattr(lib, dtype))}
    opt = lib.optim.LBFGS([x], **kwargs)

    def closure():
        opt.zero_grad()
        loss = _rosenbrock(x)
        loss.backward()
        return loss
    losses = [float(opt.step(closure)) for _ in range(steps)]
    return losses, [x.detach().numpy().copy()], opt


def _same_state(e, t, rtol, atol, where="state"):
    """Equal structure, Python types and tensor dtypes; values close."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), where
        assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape), where
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=rtol, atol=atol, err_msg=where)
    elif isinstance(t, dict):
        assert list(e) == list(t), where
        for k in t:
            _same_state(e[k], t[k], rtol, atol, f"{where}[{k!r}]")
    elif isinstance(t, list):
        assert isinstance(e, list) and len(e) == len(t), where
        for i, (a, b) in enumerate(zip(e, t)):
            _same_state(a, b, rtol, atol, f"{where}[{i}]")
    elif isinstance(t, float):
        assert type(e) is float, where
        np.testing.assert_allclose(e, t, rtol=rtol, atol=atol, err_msg=where)
    else:
        assert type(e) is type(t) and e == t, where


def _compare(ours, theirs, rtol=1e-9, atol=1e-12, state_tol=(1e-6, 1e-10)):
    """Losses and parameters to ``rtol``/``atol``; the state to ``state_tol``: its scalars
    (``al``, ``ro``) are products of dot products of nearly cancelling vectors, so the
    libraries' summation orders show more there."""
    (el, ep, eo), (tl, tp, to) = ours, theirs
    np.testing.assert_allclose(el, tl, rtol=rtol, atol=atol)
    for a, b in zip(ep, tp):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    _same_state(eo.state_dict(), to.state_dict(), *state_tol)


ROSENBROCK = [
    dict(),
    dict(line_search_fn="strong_wolfe"),
    dict(lr=0.5, max_iter=7, history_size=3),
    dict(lr=0.8, max_iter=7, history_size=3, line_search_fn="strong_wolfe"),
    dict(max_iter=4, max_eval=5, line_search_fn="strong_wolfe"),
    dict(lr=1.5, tolerance_change=1e-4, tolerance_grad=1e-3, line_search_fn="strong_wolfe"),
    dict(max_iter=3, tolerance_grad=1e-3),
    # first steps far too long: the line search shrinks a bracket (zoom)
    dict(lr=10, line_search_fn="strong_wolfe"),
    dict(lr=100, max_iter=6, line_search_fn="strong_wolfe"),
    # far too short: it grows the step until out of evaluations
    dict(lr=1e-3, max_iter=3, max_eval=4, line_search_fn="strong_wolfe"),
    dict(lr="tensor", max_iter=4),
]


@pytest.mark.parametrize("kwargs", ROSENBROCK)
def test_rosenbrock_trajectory_matches_torch(kwargs):
    ours = _run_rosenbrock(ember, kwargs, steps=5)
    theirs = _run_rosenbrock(torch, kwargs, steps=5)
    _compare(ours, theirs)


def _lopsided(x):
    """A quadratic 100 times steeper on one side of 0.3: cubic interpolation keeps landing
    near one end of the line search's bracket, which then moves its trials inward."""
    return ((x - 0.3).relu() ** 2 * 100 + (0.3 - x).relu() ** 2).sum()


@pytest.mark.parametrize("lr", [10, 100])
def test_lopsided_line_search_matches_torch(lr):
    runs = []
    for lib in (ember, torch):
        x = lib.tensor([-1.5, 2.0, 0.5, -0.3], dtype=lib.float64, requires_grad=True)
        opt = lib.optim.LBFGS([x], lr=lr, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = _lopsided(x)
            loss.backward()
            return loss
        runs.append(([float(opt.step(closure)) for _ in range(3)], [x.detach().numpy()], opt))
    _compare(*runs)


def test_rosenbrock_converges_and_stops():
    """Started near the minimum, strong Wolfe reaches it; then the gradient is already
    small, and a step evaluates the closure once and changes nothing."""
    for lib in (ember, torch):
        losses, (x,), opt = _run_rosenbrock(lib, dict(line_search_fn="strong_wolfe"), 4,
                                            start=(0.8, 0.7, 0.6, 0.4))
        np.testing.assert_allclose(x, np.ones(4), atol=1e-4)
    ours = _run_rosenbrock(ember, dict(line_search_fn="strong_wolfe"), 4,
                           start=(0.8, 0.7, 0.6, 0.4))
    theirs = _run_rosenbrock(torch, dict(line_search_fn="strong_wolfe"), 4,
                             start=(0.8, 0.7, 0.6, 0.4))
    _compare(ours, theirs, rtol=1e-7, atol=1e-10)


def test_step_at_a_minimum_evaluates_once():
    for kwargs in ({}, {"line_search_fn": "strong_wolfe"}):
        ours = _run_rosenbrock(ember, kwargs, 2, start=(1.0, 1.0, 1.0))
        theirs = _run_rosenbrock(torch, kwargs, 2, start=(1.0, 1.0, 1.0))
        _compare(ours, theirs)
        assert ours[2].state_dict()["state"][0] == {"func_evals": 2, "n_iter": 0}


def test_float32_trajectory_matches_torch():
    ours = _run_rosenbrock(ember, dict(max_iter=5, line_search_fn="strong_wolfe"), 3, "float32")
    theirs = _run_rosenbrock(torch, dict(max_iter=5, line_search_fn="strong_wolfe"), 3,
                             "float32")
    _compare(ours, theirs, rtol=1e-4, atol=1e-5, state_tol=(1e-2, 1e-3))


def _sequence_model(lib, steps, kwargs, dtype="float64"):
    """time_sequence_prediction in small: an LSTMCell and a Linear fitting a sine wave."""
    rng = np.random.default_rng(0)
    t = np.arange(12) + rng.integers(-4, 4, (3, 1))
    data = np.sin(t / 4.0)
    lib.manual_seed(0)
    cell = lib.nn.LSTMCell(1, 6).to(getattr(lib, dtype))
    head = lib.nn.Linear(6, 1).to(getattr(lib, dtype))
    params = list(cell.parameters()) + list(head.parameters())
    init = np.random.default_rng(1)
    with lib.no_grad():
        for p in params:
            p.copy_(lib.tensor(init.uniform(-0.4, 0.4, tuple(p.shape))))
    inputs = lib.tensor(data[:, :-1], dtype=getattr(lib, dtype))
    target = lib.tensor(data[:, 1:], dtype=getattr(lib, dtype))
    opt = lib.optim.LBFGS(params, **kwargs)

    def closure():
        opt.zero_grad()
        h = c = lib.zeros(3, 6, dtype=getattr(lib, dtype))
        outs = []
        for x in inputs.split(1, dim=1):
            h, c = cell(x, (h, c))
            outs.append(head(h))
        loss = lib.nn.functional.mse_loss(lib.cat(outs, 1), target)
        loss.backward()
        return loss
    losses = [float(opt.step(closure)) for _ in range(steps)]
    return losses, [p.detach().numpy().copy() for p in params], opt


@pytest.mark.parametrize("kwargs", [dict(lr=0.8, max_iter=6),
                                    dict(lr=0.8, max_iter=6, line_search_fn="strong_wolfe")])
def test_small_model_trajectory_matches_torch(kwargs):
    ours = _sequence_model(ember, 3, kwargs)
    theirs = _sequence_model(torch, 3, kwargs)
    assert ours[0][-1] < ours[0][0]
    _compare(ours, theirs, rtol=1e-7, atol=1e-10)


def test_state_dict_round_trip_continues_torchs_run():
    """PyTorch's state dict after 2 steps, loaded into ember's LBFGS, continues as PyTorch
    does; and ember's own state dict resumes its run exactly."""
    kwargs = dict(max_iter=5, history_size=4, line_search_fn="strong_wolfe")
    full_t = _run_rosenbrock(torch, kwargs, steps=4)
    _, (x2,), opt_t = _run_rosenbrock(torch, kwargs, steps=2)
    sd = opt_t.state_dict()

    def convert(v):
        if isinstance(v, torch.Tensor):
            return ember.tensor(v.numpy())
        if isinstance(v, dict):
            return {k: convert(w) for k, w in v.items()}
        if isinstance(v, list):
            return [convert(w) for w in v]
        return v
    x = ember.tensor(x2, requires_grad=True)
    opt = ember.optim.LBFGS([x], **kwargs)
    opt.load_state_dict(convert(sd))
    _same_state(opt.state_dict(), sd, 0, 0)

    def closure():
        opt.zero_grad()
        loss = _rosenbrock(x)
        loss.backward()
        return loss
    losses = [float(opt.step(closure)) for _ in range(2)]
    np.testing.assert_allclose(losses, full_t[0][2:], rtol=1e-9)
    np.testing.assert_allclose(x.detach().numpy(), full_t[1][0], rtol=1e-9, atol=1e-12)
    _same_state(opt.state_dict(), full_t[2].state_dict(), 1e-9, 1e-12)


def test_parameter_without_gradient_and_repr():
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        unused = lib.tensor([3.0], dtype=lib.float64, requires_grad=True)
        opt = lib.optim.LBFGS([x, unused], max_iter=3)

        def closure():
            opt.zero_grad()
            loss = ((x - 0.5) ** 2).sum()
            loss.backward()
            return loss
        opt.step(closure)
        assert unused.item() == 3.0
        assert unused.grad is None
    assert repr(ember.optim.LBFGS([ember.zeros(1, requires_grad=True)], lr=0.8)) == \
        repr(torch.optim.LBFGS([torch.zeros(1, requires_grad=True)], lr=0.8))


def _two_groups(lib):
    opt = lib.optim.LBFGS([lib.zeros(1, requires_grad=True)])
    opt.add_param_group({"params": [lib.zeros(1, requires_grad=True)]})
    opt.step(lambda: lib.zeros(()))


def _bad_line_search(lib):
    x = lib.ones(2, requires_grad=True)
    opt = lib.optim.LBFGS([x], line_search_fn="armijo")

    def closure():
        opt.zero_grad()
        loss = (x ** 2).sum()
        loss.backward()
        return loss
    opt.step(closure)


@pytest.mark.parametrize("build", [
    lambda lib: lib.optim.LBFGS([{"params": [lib.zeros(1, requires_grad=True)]},
                                 {"params": [lib.zeros(1, requires_grad=True)], "lr": 0.1}]),
    lambda lib: lib.optim.LBFGS([lib.zeros(1, requires_grad=True)], lr=-1),
    lambda lib: lib.optim.LBFGS([lib.zeros(1, requires_grad=True)], lr=lib.ones(2)),
    lambda lib: lib.optim.LBFGS([]),
    _two_groups,
    _bad_line_search,
])
def test_errors_match_torch(build):
    same_error(build, torch)
