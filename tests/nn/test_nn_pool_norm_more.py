"""``lp_pool1d/2d/3d``, ``local_response_norm``, ``channel_shuffle`` and their modules
against PyTorch: values, grad_fns, gradients (finite differences, second order, PyTorch),
reprs and errors."""
import numpy as np
import pytest

import ember

from ..conftest import to_np
from ..opspec import Spec, op_tests

F_ = lambda L: L.nn.functional  # noqa: E731
SPECS = [
    Spec("lp_pool1d", lambda L, x: F_(L).lp_pool1d(x, 2.0, 3, stride=2), [((2, 3, 7),)]),
    Spec("lp_pool2d", lambda L, x: F_(L).lp_pool2d(x, 3, (2, 3), ceil_mode=True),
         [((1, 2, 5, 6),)], domain=(0.2, 2.0)),
    Spec("lp_pool3d", lambda L, x: F_(L).lp_pool3d(x, 1.5, 2), [((1, 1, 4, 4, 4),)],
         domain=(0.2, 2.0)),
    Spec("lp_pool_inf", lambda L, x: F_(L).lp_pool2d(x, float("inf"), 2), [((1, 1, 4, 4),)],
         distinct=True),
    Spec("local_response_norm_3d", lambda L, x: F_(L).local_response_norm(x, 3, alpha=0.1),
         [((2, 5, 4),)]),
    Spec("local_response_norm_4d", lambda L, x: F_(L).local_response_norm(x, 2, beta=0.5, k=2),
         [((2, 4, 3, 3),), ((1, 3, 2, 2, 2),)]),
    Spec("max_unpool2d", lambda L, x: F_(L).max_unpool2d(*F_(L).max_pool2d(
        x, 2, return_indices=True), 2, output_size=(5, 5)), [((1, 2, 4, 4),), ((2, 4, 4),)],
        distinct=True),
    Spec("max_unpool1d", lambda L, x: F_(L).max_unpool1d(*F_(L).max_pool1d(
        x, 2, return_indices=True), 2), [((2, 2, 7),)], distinct=True),
    Spec("max_unpool3d", lambda L, x: F_(L).max_unpool3d(*F_(L).max_pool3d(
        x, (2, 1, 2), return_indices=True), (2, 1, 2)), [((1, 1, 4, 2, 4),)], distinct=True),
    Spec("channel_shuffle", lambda L, x: F_(L).channel_shuffle(x, 3), [((2, 6, 2),),
                                                                       ((1, 6, 2, 2),)]),
]
test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)

MODULES = [("LPPool1d", (2, 3), (2, 4, 9)), ("LPPool2d", (1.5, 2), (1, 2, 4, 6)),
           ("LPPool3d", (2, (2, 1, 2)), (1, 1, 4, 3, 4)), ("LocalResponseNorm", (3,), (2, 6, 5)),
           ("ChannelShuffle", (2,), (3, 4, 2, 2))]


def test_unpool_modules_match_torch(torch):
    x = np.random.default_rng(0).permutation(64).reshape(1, 1, 4, 4, 4).astype(float)
    for n, shape in ((1, (1, 4, 16)), (2, (1, 4, 4, 4)), (3, (1, 1, 4, 4, 4))):
        outs = []
        for lib in (ember, torch):
            pool = getattr(lib.nn, f"MaxPool{n}d")(2, return_indices=True)
            unpool = getattr(lib.nn, f"MaxUnpool{n}d")(2)
            y, i = pool(lib.tensor(x.reshape(shape)))
            outs.append((repr(unpool), to_np(unpool(y, i)), to_np(unpool(y, i, output_size=[
                s + 1 for s in shape]))))
        for a, b in zip(*outs):
            np.testing.assert_equal(a, b)


@pytest.mark.parametrize("name,args,shape", MODULES, ids=[m[0] for m in MODULES])
def test_modules_match_torch(torch, name, args, shape):
    x = np.abs(np.random.default_rng(0).standard_normal(shape)) + 0.1
    outs = []
    for lib in (ember, torch):
        m = getattr(lib.nn, name)(*args)
        outs.append((repr(m), to_np(m(lib.tensor(x)))))
    assert outs[0][0] == outs[1][0]
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-12)


def test_channel_shuffle_node_is_pytorchs(torch):
    names = []
    for lib in (ember, torch):
        y = lib.nn.functional.channel_shuffle(lib.ones(1, 4, 2, requires_grad=True), 2)
        names.append([type(y.grad_fn).__name__, len(y.grad_fn.next_functions)])
    assert names[0] == names[1] == ["ChannelShuffleBackward0", 1]


ERRORS = [
    lambda L: L.nn.functional.channel_shuffle(L.ones(2, 6, 3), 4),
    lambda L: L.nn.functional.channel_shuffle(L.ones(3), 1),
    lambda L: L.nn.functional.local_response_norm(L.ones(2, 3), 2),
    lambda L: L.nn.functional.max_unpool2d(L.ones(1, 1, 2, 2), L.zeros(1, 1, 2, 2).long(), 2,
                                           output_size=(7, 7)),
    lambda L: L.nn.functional.max_unpool2d(L.ones(1, 1, 2, 2), L.zeros(1, 1, 2, 2).long(), 2,
                                           output_size=(4,)),
    lambda L: L.nn.functional.max_unpool2d(L.ones(1, 1, 2, 2), L.zeros(1, 1, 2, 1).long(), 2),
]


@pytest.mark.parametrize("make", ERRORS)
def test_errors_match_torch(torch, make):
    got = []
    for lib in (ember, torch):
        with pytest.raises((RuntimeError, ValueError)) as err:
            make(lib)
        got.append((type(err.value), str(err.value)))
    assert got[0] == got[1]
