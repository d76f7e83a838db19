"""Adadelta, Adamax, NAdam, RAdam, Rprop and ASGD against PyTorch: parameters and state after 20
steps, state-dict round trips, and PyTorch's argument errors."""
import numpy as np
import pytest

import ember
from ember import optim

from .test_optim import _flat, _groups, _run

torch = pytest.importorskip("torch")

CASES = [
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1)),
    ("Adadelta", dict(maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict()),  # rho_t passes 5 at step 6: both branches run
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=5, weight_decay=0.1, maximize=True)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.1, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
]


@pytest.mark.parametrize("grouping", [_flat, _groups], ids=["flat", "groups"])
@pytest.mark.parametrize("name,kwargs", CASES)
def test_matches_torch(name, kwargs, grouping):
    ours, opt_e = _run(ember, name, grouping, kwargs)
    theirs, opt_t = _run(torch, name, grouping, kwargs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    se, st = opt_e.state_dict(), opt_t.state_dict()
    assert se["param_groups"] == st["param_groups"]
    for i in st["state"]:
        assert list(se["state"][i]) == list(st["state"][i])
        for k, v in st["state"][i].items():
            np.testing.assert_allclose(se["state"][i][k].numpy(), v.numpy(), rtol=1e-5,
                                       atol=1e-6)
            assert str(se["state"][i][k].dtype) == str(v.dtype)


def test_rprop_sign_flips_skip_the_update():
    """A gradient that changes sign shrinks the step and leaves that element alone."""
    out = {}
    for lib in (ember, torch):
        p = lib.tensor([1.0, 1.0], requires_grad=True)
        opt = lib.optim.Rprop([p], lr=0.1)
        for g in ([1.0, 1.0], [-1.0, 1.0], [-1.0, 1.0]):
            p.grad = lib.tensor(g)
            opt.step()
        out[lib] = (p.detach().numpy().copy(), opt.state[p]["step_size"].numpy().copy())
    for a, b in zip(out[ember], out[torch]):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name,kwargs", [
    ("Adadelta", dict(lr=-1)), ("Adadelta", dict(rho=1.5)), ("Adadelta", dict(eps=-1)),
    ("Adadelta", dict(weight_decay=-1)), ("Adamax", dict(betas=(1.0, 0.9))),
    ("Adamax", dict(betas=(0.9, -0.1))), ("NAdam", dict(momentum_decay=-1)),
    ("NAdam", dict(eps=-1, betas=(2, 2))), ("RAdam", dict(weight_decay=-0.5)),
    ("Rprop", dict(etas=(1.5, 1.2))), ("Rprop", dict(lr=-0.1)),
    ("ASGD", dict(lr=-1)), ("ASGD", dict(weight_decay=-1)),
])
def test_argument_errors_match_torch(name, kwargs):
    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError) as ours:
        getattr(optim, name)([ember.zeros(1, requires_grad=True)], **kwargs)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD"])
def test_state_dict_round_trip(name):
    rng = np.random.default_rng(1)
    init = rng.standard_normal((3, 2)).astype(np.float32)
    grads = [rng.standard_normal((3, 2)).astype(np.float32) for _ in range(12)]

    def train(p, opt, ks):
        for k in ks:
            p.grad = ember.tensor(grads[k])
            opt.step()

    cls = getattr(optim, name)
    ref = ember.tensor(init, requires_grad=True)
    train(ref, cls([ref]), range(12))
    p = ember.tensor(init, requires_grad=True)
    opt1 = cls([p])
    train(p, opt1, range(6))
    opt2 = cls([p])
    opt2.load_state_dict(opt1.state_dict())
    train(p, opt2, range(6, 12))
    np.testing.assert_array_equal(p.detach().numpy(), ref.detach().numpy())
