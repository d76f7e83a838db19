"""Convolution as one GEMM per kernel row over a partial im2col (``ember/ops/nn/conv.py``)
against PyTorch in float64 and float32: 1- to 3-d, strides (the rows dealt into phases),
dilations, paddings (also PyTorch's uneven ``"same"``), groups, transposed with output
padding, empty batches; gradients by finite differences and second derivatives. Each test runs
three times: with small problems as one GEMM over a full im2col (the default); with every
problem on the path large inputs take (``_ONE_GEMM = 0``: the forward a GEMM per kernel row,
the weight gradient and the transposed form one GEMM per stride phase over a banded g where
that pays); and with the banded products off (a GEMM per kernel row throughout)."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.ops.nn import conv

from ..conftest import to_np


@pytest.fixture(autouse=True, params=["one_gemm", "rows", "row_loop"])
def path(request, monkeypatch):
    if request.param != "one_gemm":
        monkeypatch.setattr(conv, "_ONE_GEMM", 0)
    if request.param == "row_loop":
        monkeypatch.setattr(conv, "_BAND_WASTE", 0)
    return request.param


def _case(seed):
    rng = np.random.default_rng(seed)
    nd = 1 + seed % 3
    groups = int(rng.integers(1, 3))
    n, cg, og = (int(v) for v in rng.integers(1, 3, 3))
    k = tuple(int(v) for v in rng.integers(1, 4, nd))
    s = tuple(int(v) for v in rng.integers(1, 4, nd))
    d = tuple(int(v) for v in rng.integers(1, 3, nd))
    p = tuple(int(v) for v in rng.integers(0, 2, nd))
    size = tuple(int(rng.integers(dd * (kk - 1) + 1, dd * (kk - 1) + 7)) for kk, dd in zip(k, d))
    transposed = seed % 5 == 4
    x = rng.standard_normal((n, cg * groups) + size)
    if transposed:
        w = rng.standard_normal((cg * groups, og) + k)
        b = rng.standard_normal(og * groups)
        out_pad = tuple(int(rng.integers(0, min(a, e))) for a, e in zip(s, d))
        return (f"conv_transpose{nd}d", x, w, b,
                dict(stride=s, padding=p, dilation=d, groups=groups, output_padding=out_pad))
    w = rng.standard_normal((og * groups, cg) + k)
    b = rng.standard_normal(og * groups)
    return f"conv{nd}d", x, w, b, dict(stride=s, padding=p, dilation=d, groups=groups)


def _run(lib, name, arrays, kwargs, dtype):
    xs = [lib.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    y = getattr(lib.nn.functional, name)(*xs, **kwargs)
    w = lib.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)).astype(dtype))
    (y * w).sum().backward()
    return [to_np(y)] + [to_np(t.grad) for t in xs]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", range(40))
def test_matches_torch(torch, seed, dtype):
    name, x, w, b, kwargs = _case(seed)
    got = _run(ember, name, (x, w, b), kwargs, dtype)
    want = _run(torch, name, (x, w, b), kwargs, dtype)
    tol = 1e-10 if dtype == np.float64 else 1e-4
    for a, e in zip(got, want):
        assert a.shape == e.shape
        np.testing.assert_allclose(a, e, rtol=tol, atol=tol)


@pytest.mark.parametrize("shape,kernel,kwargs", [
    ((2, 3, 9, 8), (4, 3, 4, 3), dict(padding="same", dilation=(2, 1))),  # uneven pads
    ((1, 2, 11), (3, 2, 4), dict(padding="same")),
    ((2, 4, 5, 6, 7), (4, 2, 2, 3, 2), dict(stride=(3, 1, 2), groups=2, padding=1)),
    ((0, 3, 8, 8), (2, 3, 3, 3), dict(stride=2)),  # empty batch
])
def test_padding_same_and_empty(torch, shape, kernel, kwargs):
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal(shape), rng.standard_normal(kernel)
    name = f"conv{len(shape) - 2}d"
    got = _run(ember, name, (x, w), kwargs, np.float64)
    want = _run(torch, name, (x, w), kwargs, np.float64)
    for a, e in zip(got, want):
        assert a.shape == e.shape
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("transposed", [False, True])
def test_strided_gradients_by_finite_differences(transposed):
    rng = np.random.default_rng(2)
    x = ember.tensor(rng.standard_normal((2, 2, 7, 6)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((2, 3, 3, 2)), requires_grad=True)
    if transposed:
        def f(a, b):
            return ember.nn.functional.conv_transpose2d(a, b, stride=(3, 2), dilation=(2, 1),
                                                        output_padding=(1, 0))
    else:
        def f(a, b):
            return ember.nn.functional.conv2d(a, b.transpose(0, 1), stride=(3, 2), padding=1,
                                              dilation=(2, 1))
    assert gradcheck(f, (x, w))
    assert gradgradcheck(f, (x, w))


_BANDED = [  # (input, weight, kwargs): kernels of several rows per stride phase, few channels
    ((3, 4, 13, 11), (4, 2, 6, 4), dict(stride=2, padding=1, groups=2)),  # conv2d_weight_grad's
    ((2, 3, 12, 9), (4, 3, 5, 3), dict(stride=(3, 1), padding=(2, 0), dilation=(2, 1))),
    ((2, 2, 15), (3, 2, 7), dict(stride=2, padding=3)),
    ((1, 4, 9, 6, 5), (2, 2, 4, 2, 3), dict(stride=(2, 1, 2), groups=2)),
]


@pytest.mark.parametrize("chunks", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", range(len(_BANDED)))
def test_banded_phases_match_torch(torch, path, monkeypatch, case, dtype, chunks):
    """The forward, the weight gradient and the transposed form as one GEMM per stride phase
    (or per chunk of its kernel rows: two rows each with ``chunks``): values and both
    gradients against PyTorch, and the banded products taken where they should be."""
    shape, kernel, kwargs = _BANDED[case]
    if chunks:
        monkeypatch.setattr(conv, "_BAND_ROWS", 1)
    calls = []
    monkeypatch.setattr(conv, "_banded", lambda *a: calls.append(1) or _banded(*a))
    rng = np.random.default_rng(case)
    x, w = rng.standard_normal(shape), rng.standard_normal(kernel)
    name = f"conv{len(shape) - 2}d"
    got = _run(ember, name, (x, w), kwargs, dtype)
    want = _run(torch, name, (x, w), kwargs, dtype)
    tol = 1e-10 if dtype == np.float64 else 1e-4
    for a, e in zip(got, want):
        np.testing.assert_allclose(a, e, rtol=tol, atol=tol)
    assert bool(calls) == (path == "rows")


_banded = conv._banded


@pytest.mark.parametrize("chunks", [False, True])
@pytest.mark.parametrize("case", [0, 2])
def test_banded_gradients_by_finite_differences(path, monkeypatch, case, chunks):
    """Through the banded products: first and second derivatives of a strided convolution
    (the weight gradient's own derivative is the transposed form and the forward)."""
    shape, kernel, kwargs = _BANDED[case]
    if chunks:
        monkeypatch.setattr(conv, "_BAND_ROWS", 1)
    shape = (1,) + shape[1:2] + tuple(min(s, 9) for s in shape[2:])
    rng = np.random.default_rng(3)
    x = ember.tensor(rng.standard_normal(shape), requires_grad=True)
    w = ember.tensor(rng.standard_normal(kernel), requires_grad=True)
    name = f"conv{len(shape) - 2}d"

    def f(a, b):
        return getattr(ember.nn.functional, name)(a, b, **kwargs)

    assert gradcheck(f, (x, w))
    assert gradgradcheck(f, (x, w))


_WASTE = conv._BAND_WASTE  # (as imported: the ``path`` fixture changes it)


def test_chunks_of_kernel_rows(monkeypatch):
    """Where the phases split into chunks of kernel rows (forward, weight gradient) and where
    the row loop stays (tall GEMMs already)."""
    monkeypatch.setattr(conv, "_BAND_WASTE", _WASTE)
    chunks = conv._phases(24, 10, (2, 2), (1, 1), 1, 1 << 30, og=16)
    assert [len(rows) for _, rows, _, _, _ in chunks] == [6, 6, 6, 6]
    assert [(lo, hi) for _, _, _, lo, hi in chunks] == [(0, 15), (6, 21)] * 2
    assert conv._phases(24, 10, (2, 2), (1, 1), 1, 1 << 30, og=79) is None
    assert len(conv._phases(24, 10, (2, 2), (1, 1), 1, 1 << 30)) == 2  # (whole phases)
