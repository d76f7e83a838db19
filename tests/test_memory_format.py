"""Memory formats against PyTorch: the constants, the strides each function lays a tensor out
with, ``is_contiguous(memory_format=)``, and PyTorch's errors (wrong rank, wrong type)."""

import pickle

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

from .oracle import outcome


def _cl(T):
    return T.arange(120.).reshape(2, 3, 4, 5).contiguous(memory_format=T.channels_last)


# each case builds a result with library ``T``; results are compared by strides and values
CASES = {
    "contiguous-cl": lambda T: _cl(T),
    "contiguous-cl3d": lambda T: T.zeros(2, 3, 4, 5, 6).contiguous(
        memory_format=T.channels_last_3d),
    "contiguous-back": lambda T: _cl(T).contiguous(),
    "contiguous-preserve": lambda T: T.zeros(2, 3).contiguous(memory_format=T.preserve_format),
    "contiguous-size1-channel": lambda T: T.zeros(2, 1, 4, 5).contiguous(
        memory_format=T.channels_last),
    "contiguous-1x1": lambda T: T.zeros(2, 3, 1, 1).contiguous(memory_format=T.channels_last),
    "contiguous-permuted": lambda T: T.zeros(2, 3, 4, 5).permute(0, 1, 3, 2).contiguous(
        memory_format=T.channels_last),
    "clone-preserves-cl": lambda T: _cl(T).clone(),
    "clone-preserves-permuted": lambda T: T.arange(120.).reshape(2, 3, 4, 5).permute(0, 2, 3, 1)
    .clone(),
    "clone-transposed": lambda T: T.arange(6.).reshape(2, 3).t().clone(),
    "clone-strided": lambda T: T.arange(24.).reshape(4, 6)[:, ::2].t().clone(),
    "clone-cl-slice": lambda T: T.zeros(2, 3, 4, 5)[:, :, ::2].contiguous(
        memory_format=T.channels_last)[:, :, :, ::2].clone(),
    "clone-to-cl": lambda T: T.arange(120.).reshape(2, 3, 4, 5).clone(
        memory_format=T.channels_last),
    "clone-to-contiguous": lambda T: _cl(T).clone(memory_format=T.contiguous_format),
    "to-cl": lambda T: T.zeros(2, 3, 4, 5).to(memory_format=T.channels_last),
    "to-dtype-cl": lambda T: T.zeros(2, 3, 4, 5).to(T.float64, memory_format=T.channels_last),
    "to-dtype-keeps": lambda T: _cl(T).to(T.float64),
    "to-preserve": lambda T: T.zeros(2, 3).t().to(memory_format=T.preserve_format),
    "to-contiguous-aliases": lambda T: T.zeros(2, 3).t().to(memory_format=T.contiguous_format),
    "cpu-cl": lambda T: T.zeros(2, 3, 4, 5).cpu(memory_format=T.channels_last),
    "float-cl": lambda T: T.zeros(2, 3, 4, 5, dtype=T.float64).float(
        memory_format=T.channels_last),
    "double-cl": lambda T: T.zeros(2, 3, 4, 5).double(memory_format=T.channels_last),
    "empty-cl": lambda T: T.empty(2, 3, 4, 5, memory_format=T.channels_last).zero_(),
    "empty_like": lambda T: T.empty_like(_cl(T)).zero_(),
    "zeros_like": lambda T: T.zeros_like(_cl(T)),
    "ones_like-contiguous": lambda T: T.ones_like(_cl(T), memory_format=T.contiguous_format),
    "full_like": lambda T: T.full_like(_cl(T), 2.0),
    "full_like-permuted": lambda T: T.full_like(T.zeros(3, 4).t(), 2.0),
    "zeros_like-cl": lambda T: T.zeros_like(T.zeros(2, 3, 4, 5), memory_format=T.channels_last),
    "rand_like": lambda T: T.rand_like(_cl(T)).mul(0),
    "randn_like-cl": lambda T: T.randn_like(T.zeros(2, 3, 4, 5),
                                            memory_format=T.channels_last).mul(0),
    "randint_like": lambda T: T.randint_like(_cl(T), 1),
    "add-keeps": lambda T: _cl(T) + 1,
    "view-cl": lambda T: _cl(T).view(-1),
    "reshape-cl": lambda T: _cl(T).reshape(-1),
    "contiguous-positional": lambda T: T.zeros(2).contiguous(T.contiguous_format),
    "contiguous-rank": lambda T: T.zeros(2, 3).contiguous(memory_format=T.channels_last),
    "contiguous-rank-3d": lambda T: T.zeros(2, 3, 4, 5).contiguous(
        memory_format=T.channels_last_3d),
    "clone-rank": lambda T: T.zeros(2, 3).clone(memory_format=T.channels_last),
    "clone-int": lambda T: T.zeros(2, 3).clone(memory_format=3),
    "empty_like-int": lambda T: T.empty_like(T.zeros(2), memory_format=3),
    "empty_like-rank": lambda T: T.empty_like(T.zeros(2), memory_format=T.channels_last),
    "empty-preserve": lambda T: T.empty(2, 3, memory_format=T.preserve_format),
    "empty-rank": lambda T: T.empty(2, 3, memory_format=T.channels_last),
    "empty-int": lambda T: T.empty(2, 3, memory_format=1),
    "to-rank": lambda T: T.zeros(2, 3).to(memory_format=T.channels_last),
    "double-rank": lambda T: T.zeros(2, 3).double(memory_format=T.channels_last),
    "cpu-positional": lambda T: T.zeros(2).cpu(T.channels_last),
    "construct": lambda T: T.memory_format(),
}

IS_CONTIGUOUS = {
    "cl-as-cl": lambda T: _cl(T).is_contiguous(memory_format=T.channels_last),
    "cl-as-default": lambda T: _cl(T).is_contiguous(),
    "cl-as-contiguous": lambda T: _cl(T).is_contiguous(memory_format=T.contiguous_format),
    "plain-as-cl": lambda T: T.zeros(2, 3, 4, 5).is_contiguous(memory_format=T.channels_last),
    "size1-channel": lambda T: T.zeros(2, 1, 4, 5).is_contiguous(memory_format=T.channels_last),
    "1x1": lambda T: T.zeros(2, 3, 1, 1).is_contiguous(memory_format=T.channels_last),
    "empty-batch": lambda T: T.zeros(0, 3, 4, 5).is_contiguous(memory_format=T.channels_last),
    "rank2-as-cl": lambda T: T.zeros(2, 3).is_contiguous(memory_format=T.channels_last),
    "rank2-as-cl3d": lambda T: T.zeros(2, 3).is_contiguous(memory_format=T.channels_last_3d),
    "preserve": lambda T: T.zeros(2, 3).is_contiguous(memory_format=T.preserve_format),
    "cl-permuted": lambda T: _cl(T).permute(0, 2, 3, 1).is_contiguous(),
    "cl3d": lambda T: T.zeros(2, 3, 4, 5, 6).contiguous(memory_format=T.channels_last_3d)
    .is_contiguous(memory_format=T.channels_last_3d),
    "positional": lambda T: T.zeros(2).is_contiguous(T.channels_last),
}


def _outcome(T, build):
    r = outcome(build, T)
    if isinstance(r, (T.Tensor,)):
        return str(r.dtype), tuple(r.shape), r.stride(), r.tolist()
    return r


@pytest.mark.parametrize("case", sorted(CASES))
def test_layouts_match_pytorch(torch, case):
    assert _outcome(ember, CASES[case]) == _outcome(torch, CASES[case])


@pytest.mark.parametrize("case", sorted(IS_CONTIGUOUS))
def test_is_contiguous_matches_pytorch(torch, case):
    assert _outcome(ember, IS_CONTIGUOUS[case]) == _outcome(torch, IS_CONTIGUOUS[case])


def test_constants_match_pytorch(torch):
    for name in ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d"):
        ours, theirs = getattr(ember, name), getattr(torch, name)
        assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
        assert type(ours) is ember.memory_format
        assert pickle.loads(pickle.dumps(ours)) is ours
    assert str(ember.memory_format) == str(torch.memory_format)


def test_module_to_channels_last_matches_pytorch(torch):
    strides = []
    for T in (ember, torch):
        T.manual_seed(0)
        net = T.nn.Sequential(T.nn.Conv2d(3, 4, 3), T.nn.Linear(2, 2))
        net.to(memory_format=T.channels_last)
        strides.append([p.stride() for p in net.parameters()])
    assert strides[0] == strides[1]


def test_channels_last_gradients_and_graph(torch):
    x = ember.randn(2, 3, 4, 5, dtype=ember.float64, requires_grad=True)
    for fmt in (ember.channels_last, ember.contiguous_format):
        assert gradcheck(lambda t: t.clone(memory_format=fmt).sin(), (x,))
        assert gradcheck(lambda t: t.contiguous(memory_format=fmt) * 2, (x,))
        assert gradcheck(lambda t: t.to(memory_format=fmt).cos(), (x,))
    names = {}
    for T in (ember, torch):
        t = T.zeros(2, 3, 4, 5, requires_grad=True)
        names[T] = [type(f(t).grad_fn).__name__ for f in (
            lambda t: t.clone(memory_format=T.channels_last),
            lambda t: t.contiguous(memory_format=T.channels_last),
            lambda t: t.to(memory_format=T.channels_last))]
    assert names[ember] == names[torch]


def test_conv_on_channels_last_input_matches_pytorch(torch):
    w = np.random.default_rng(0).standard_normal((4, 3, 3, 3))
    x = np.random.default_rng(1).standard_normal((2, 3, 6, 7))
    outs = []
    for T in (ember, torch):
        inp = T.tensor(x).contiguous(memory_format=T.channels_last)
        outs.append(T.nn.functional.conv2d(inp, T.tensor(w)).numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-10, atol=1e-12)


def test_other_backends_are_false_like_pytorch(torch):
    t, r = ember.zeros(2), torch.zeros(2)
    names = [n for n in dir(torch.Tensor) if n.startswith("is_")
             and not callable(getattr(r, n))]
    assert {n: getattr(t, n) for n in names} == {n: getattr(r, n) for n in names}


def test_record_stream_refuses_non_streams_like_pytorch(torch):
    for args in ((None,), ("x",), ()):
        outcomes = []
        for T in (ember, torch):
            with pytest.raises(Exception) as info:
                T.zeros(2).record_stream(*args)
            outcomes.append((type(info.value).__name__, str(info.value)))
        assert outcomes[0] == outcomes[1]


VMAP = {
    "contiguous-cl": lambda T, t: t.contiguous(memory_format=T.channels_last),
    "clone-cl": lambda T, t: t.clone(memory_format=T.channels_last),
    "clone-contiguous": lambda T, t: t.clone(memory_format=T.contiguous_format),
    "clone": lambda T, t: t.clone(),
    "contiguous": lambda T, t: t.contiguous(),
    "zeros_like-cl": lambda T, t: T.zeros_like(t, memory_format=T.channels_last),
    "is_contiguous-cl": lambda T, t: T.full((), float(t.is_contiguous(
        memory_format=T.channels_last))),
}


@pytest.mark.parametrize("case", sorted(VMAP))
def test_memory_formats_inside_vmap_match_pytorch(torch, case):
    """PyTorch refuses channels-last layouts inside vmap; the other formats give values."""
    x = np.arange(360.).reshape(3, 2, 3, 4, 5)
    outcomes = []
    for T in (ember, torch):
        outcomes.append(outcome(lambda: T.vmap(lambda t: VMAP[case](T, t))(T.tensor(x)).tolist()))
    assert outcomes[0] == outcomes[1]
