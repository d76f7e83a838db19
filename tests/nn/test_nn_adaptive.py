"""``nn.AdaptiveLogSoftmaxWithLoss`` against PyTorch with the same weights: outputs, loss,
grad_fn, gradients of every parameter, ``log_prob``, ``predict``, repr, and the errors."""
import numpy as np
import pytest

import ember

from ..conftest import to_np


def _pair(torch, **kwargs):
    kwargs = dict(dict(in_features=8, n_classes=20, cutoffs=[4, 10]), **kwargs)
    mt = torch.nn.AdaptiveLogSoftmaxWithLoss(**kwargs).double()
    me = ember.nn.AdaptiveLogSoftmaxWithLoss(**kwargs).double()
    me.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in
                        mt.state_dict().items()})
    return me, mt


@pytest.mark.parametrize("kwargs", [{}, dict(div_value=2.0, head_bias=True),
                                    dict(cutoffs=[2])])
def test_forward_and_gradients_match_torch(torch, kwargs):
    me, mt = _pair(torch, **kwargs)
    assert repr(me) == repr(mt)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((7, 8))
    target = np.array([0, 3, 5, 19, 9, 12, 3])
    outs = []
    for lib, m in ((ember, me), (torch, mt)):
        r = m(lib.tensor(x, requires_grad=True), lib.tensor(target))
        r.loss.backward()
        outs.append((to_np(r.output), to_np(r.loss), type(r.loss.grad_fn).__name__,
                     [to_np(p.grad) for p in m.parameters()], to_np(m.log_prob(lib.tensor(x))),
                     to_np(m.predict(lib.tensor(x))), type(r).__name__))
    for a, b in zip(*outs):
        if isinstance(a, list):
            for u, v in zip(a, b):
                np.testing.assert_allclose(u, v, rtol=1e-10, atol=1e-12)
        elif isinstance(a, str):
            assert a == b
        else:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_unbatched_and_single_row(torch):
    me, mt = _pair(torch)
    x = np.random.default_rng(1).standard_normal(8)
    for t in (3, 15):
        a = me(ember.tensor(x), ember.tensor(t))
        b = mt(torch.tensor(x), torch.tensor(t))
        np.testing.assert_allclose(to_np(a.output), to_np(b.output), rtol=1e-10)
        assert tuple(a.output.shape) == tuple(b.output.shape) == ()
    a = me(ember.tensor(x[None]), ember.tensor([15]))
    b = mt(torch.tensor(x[None]), torch.tensor([15]))
    np.testing.assert_allclose(to_np(a.output), to_np(b.output), rtol=1e-10)


ERRORS = [
    (ValueError, lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [])),
    (ValueError, lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [10, 4])),
    (ValueError, lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 20])),
    (RuntimeError, lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4])(
        L.ones(3, 8), L.tensor([1, 2]))),
    (RuntimeError, lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4])(
        L.ones(3, 8), L.tensor([1, 2, 25]))),
    (RuntimeError, lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4])(
        L.ones(8), L.tensor([[1]]))),
]


@pytest.mark.parametrize("kind,make", ERRORS)
def test_errors_match_torch(torch, kind, make):
    got = []
    for lib in (ember, torch):
        with pytest.raises(kind) as err:
            make(lib)
        got.append(str(err.value))
    assert got[0] == got[1]
