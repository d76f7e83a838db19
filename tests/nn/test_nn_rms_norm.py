"""``F.rms_norm`` and ``nn.RMSNorm`` against PyTorch: values, grad_fn chain, gradients (first
and second order), default eps per dtype, half precision, the module, and the errors."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

from ..conftest import to_np
from ..opspec import Spec, op_tests

SPECS = [
    Spec("rms_norm", lambda L, x: L.nn.functional.rms_norm(x, (3,)), [((3,),), ((2, 3),)]),
    Spec("rms_norm_weight", lambda L, x, w: L.nn.functional.rms_norm(x, (2, 3), w, eps=1e-3),
         [((4, 2, 3), (2, 3))]),
    # add.Scalar (AddBackward1), which rms_norm's "+ eps" records
    Spec("add_scalar", lambda L, x: L.nn.functional.rms_norm(x, (1,), eps=0.5), [((3, 1),)]),
]
test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)


def _chain(t):
    names, fn = [], t.grad_fn
    while fn is not None:
        names.append(type(fn).__name__)
        nxt = [f for f, _ in fn.next_functions if f is not None and
               type(f).__name__ != "AccumulateGrad"]
        fn = nxt[0] if nxt else None
    return names


def test_grad_fn_chain_is_pytorchs(torch):
    chains = []
    for lib in (ember, torch):
        x = lib.randn(2, 3, requires_grad=True)
        chains.append(_chain(lib.nn.functional.rms_norm(x, (3,))))
    assert chains[0] == chains[1] == ["MulBackward0", "RsqrtBackward0", "AddBackward1",
                                      "MeanBackward1", "PowBackward0"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_default_eps_and_dtypes(torch, dtype):
    data = np.array([[1e-4, -2e-4, 3e-4], [0.5, 1.0, -2.0]])
    outs = [lib.nn.functional.rms_norm(lib.tensor(data, dtype=getattr(lib, dtype)), [3])
            for lib in (ember, torch)]
    assert str(outs[0].dtype) == str(outs[1].dtype)
    np.testing.assert_allclose(to_np(outs[0]).astype(float), to_np(outs[1]).astype(float),
                               rtol=1e-3 if dtype == "float16" else 1e-6)


def test_module(torch):
    data = np.random.default_rng(0).standard_normal((2, 3, 4))
    for kwargs in (dict(normalized_shape=4), dict(normalized_shape=[3, 4], eps=1e-5),
                   dict(normalized_shape=(4,), elementwise_affine=False)):
        me, mt = ember.nn.RMSNorm(**kwargs), torch.nn.RMSNorm(**kwargs)
        assert repr(me) == repr(mt)
        assert list(me.state_dict()) == list(mt.state_dict())
        np.testing.assert_allclose(to_np(me(ember.tensor(data))), to_np(mt(torch.tensor(data))),
                                   rtol=1e-12)
    m = ember.nn.RMSNorm(4)
    with ember.no_grad():
        m.weight.copy_(ember.tensor([1.0, 2.0, 3.0, 4.0]))
    x = ember.tensor(data, requires_grad=True)
    assert gradcheck(lambda x: m(x), [x])


@pytest.mark.parametrize("args", [((2, 3),), ((3, 4), "w4"), ((4,), "w3"), ([],), (4,)])
def test_errors_match_torch(torch, args):
    got = []
    for lib in (ember, torch):
        a = [lib.ones(int(x[1:])) if isinstance(x, str) else x for x in args]
        with pytest.raises((RuntimeError, TypeError)) as err:
            lib.nn.functional.rms_norm(lib.zeros(2, 3, 4), *a)
        got.append((type(err.value), str(err.value)))
    assert got[0] == got[1]
    with pytest.raises(NotImplementedError) as ours:
        ember.nn.functional.rms_norm(ember.ones(3, dtype=ember.long), (3,))
    with pytest.raises(NotImplementedError) as theirs:
        torch.nn.functional.rms_norm(torch.ones(3, dtype=torch.long), (3,))
    assert str(ours.value) == str(theirs.value)
