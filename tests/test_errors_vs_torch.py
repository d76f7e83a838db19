"""Differential tests against PyTorch: where ember used to let NumPy's or Python's exceptions
out (or gave a wrong result), it now raises PyTorch's exception with PyTorch's whole message,
or returns PyTorch's values, dtypes and grad_fn names.

Each case is a function of the library (``L``: ember or torch) run on both; the outcome is
compared whole: the exception type and message, or the results (shape, dtype, values,
grad_fn name). Errors must leave the tensors they were handed unchanged.
"""
import math

import numpy as np
import pytest

import ember

from .conftest import to_np
from .oracle import Raised, outcome, pytorch_words

F32 = dict(rtol=1e-6, atol=1e-6)


def _outcome(L, fn):
    """What ``fn(L)`` does: ``("raises", type name, message)`` or ``("returns", results)``."""
    result = outcome(fn, L)
    return ("raises", *result) if isinstance(result, Raised) else ("returns", result)


def _describe(x):
    """A comparable description of a result (tensors by shape, dtype, values and grad_fn)."""
    if isinstance(x, (tuple, list)):
        return [_describe(v) for v in x]
    if hasattr(x, "detach") and hasattr(x, "dtype"):
        node = x.grad_fn
        return ("tensor", tuple(x.shape), str(x.dtype), type(node).__name__ if node else None,
                to_np(x.resolve_conj()))
    return x


def _same(a, b):
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
    elif isinstance(a, tuple) and a and a[0] == "tensor":
        assert a[:4] == b[:4]
        assert np.array_equal(a[4], b[4], equal_nan=True) or np.allclose(
            a[4], b[4], equal_nan=True, **F32), (a[4], b[4])
    else:
        assert a == b


def check_same(torch, fn, explained=False):
    """``fn(ember)`` and ``fn(torch)`` raise the same exception or return the same results.
    ``explained``: ember's in-place modification error may go on to say which op wrote the
    tensor, where (``autograd.graph.check_version``), after PyTorch's whole message."""
    mine, theirs = _outcome(ember, fn), _outcome(torch, fn)
    if explained and mine[0] == theirs[0] == "raises" and "\n\nember: " in mine[2]:
        mine = mine[:2] + (pytorch_words(mine[2]),)
    if theirs[0] == "raises" or mine[0] == "raises":
        assert mine == theirs
        return
    _same(_describe(mine[1]), _describe(theirs[1]))


def cases(**named):
    return pytest.mark.parametrize("fn", list(named.values()), ids=list(named))


# --------------------------------------------------------------------------- dims of 0-d tensors

def _scalar(L, grad=True):
    return L.tensor(3.0, dtype=L.float64, requires_grad=grad)


@cases(
    transpose=lambda L: _scalar(L).transpose(0, -1),
    transpose_00=lambda L: L.transpose(_scalar(L), 0, 0),
    transpose_bad=lambda L: _scalar(L).transpose(0, 1),
    swapaxes=lambda L: L.swapaxes(_scalar(L), 0, -1),
    swapdims=lambda L: L.swapdims(_scalar(L), -1, 0),
    t=lambda L: _scalar(L).t(),
    movedim=lambda L: L.movedim(_scalar(L), 0, 0),
    movedim_list=lambda L: L.movedim(_scalar(L), [-1], [0]),
    movedim_bad=lambda L: L.movedim(_scalar(L), 1, 0),
    unbind=lambda L: _scalar(L).unbind(),
    unbind_neg=lambda L: L.unbind(_scalar(L), -1),
    unbind_bad=lambda L: _scalar(L).unbind(3),
    select=lambda L: _scalar(L).select(0, 0),
    size=lambda L: _scalar(L).size(0),
    size_neg=lambda L: _scalar(L).size(-3),
    stride=lambda L: _scalar(L, False).stride(0),
    roll=lambda L: L.roll(_scalar(L), 1, -4),
    flatten_bad=lambda L: L.flatten(_scalar(L), 0, -2),
    unfold_bad=lambda L: _scalar(L).unfold(1, 1, 1),
    repeat_interleave=lambda L: L.repeat_interleave(_scalar(L), 2, 0),
    repeat_interleave_tensor=lambda L: L.repeat_interleave(_scalar(L), L.tensor([2]), 1),
    aminmax=lambda L: L.aminmax(_scalar(L), dim=1),
    adjoint=lambda L: L.tensor(1 + 2j).adjoint(),
    cummax=lambda L: L.cummax(_scalar(L), 1),
    cummin=lambda L: L.cummin(_scalar(L), -1),
    cumsum=lambda L: L.cumsum(_scalar(L), 0),
    cumprod=lambda L: L.cumprod(_scalar(L), -1),
    logcumsumexp=lambda L: L.logcumsumexp(_scalar(L), 0),
    mode=lambda L: L.mode(_scalar(L)),
    mode_bad=lambda L: L.mode(_scalar(L), 1),
)
def test_dims_of_0d_tensors(torch, fn):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (adjoint's deprecation, once per process)
        check_same(torch, fn)


def test_0d_transpose_is_a_view_with_pytorchs_node(torch):
    for L in (ember, torch):
        x = L.tensor(3.0, requires_grad=True)
        y = x.transpose(0, -1)
        assert y._base is x and type(y.grad_fn).__name__ == "TransposeBackward0"
        assert type(L.movedim(x, 0, -1).grad_fn).__name__ == "AliasBackward0"
        y.backward()
        assert x.grad.item() == 1.0
    z = ember.tensor(3.0)
    z.transpose_(0, 0)  # in place too
    assert z.shape == () and z._version == 1


# --------------------------------------------------------------------------- scans over empty dims

@cases(
    cummax_empty=lambda L: L.cummax(L.zeros(0), 0),
    cummin_empty=lambda L: L.cummin(L.zeros(2, 0), 1),
    cummax_empty_other_dim=lambda L: L.cummax(L.zeros(2, 0), 0),
    cummax_complex=lambda L: L.cummax(L.tensor([1 + 1j]), 0),
    cummax_bool=lambda L: L.cummax(L.tensor([False, True, False]), 0),
    cumsum_empty=lambda L: L.cumsum(L.zeros(0, 3, dtype=L.int32), 0),
    cumprod_empty=lambda L: L.cumprod(L.zeros(0, 2), 1),
    logcumsumexp_empty=lambda L: L.logcumsumexp(L.zeros(2, 0), 1),
    cummax_empty_grad=lambda L: L.cummax(L.zeros(0, 3, requires_grad=True), 1),
)
def test_scans_over_empty_dims(torch, fn):
    check_same(torch, fn)


# --------------------------------------------------------------------------- joins

@cases(
    cat_empty=lambda L: L.cat([]),
    cat_empty_tuple=lambda L: L.cat(()),
    stack_empty=lambda L: L.stack([]),
    hstack_empty=lambda L: L.hstack([]),
    cross_no_dim_of_3=lambda L: L.cross(L.zeros(2), L.zeros(2)),
    permute_no_dims=lambda L: L.zeros(2).permute(),
    flip_no_dims=lambda L: L.flip(L.zeros(2)),
    flip_twice=lambda L: L.flip(L.zeros(2), [0], dims=[0]),
)
def test_joins_and_arguments(torch, fn):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (cross without dim)
        check_same(torch, fn)


# --------------------------------------------------------------------------- convolution

def _conv(name, x, w, dtype="float64", **kw):
    def fn(L):
        dt = getattr(L, dtype)
        return getattr(L.nn.functional, name)(L.zeros(*x, dtype=dt), L.zeros(*w, dtype=dt), **kw)
    return fn


CONV_CASES = dict(
    kernel_too_big_1d=_conv("conv1d", (1, 1, 2), (1, 1, 3)),
    kernel_too_big_2d=_conv("conv2d", (1, 1, 2, 5), (1, 1, 3, 3)),
    kernel_too_big_3d=_conv("conv3d", (1, 1, 2, 2, 2), (1, 1, 3, 3, 3)),
    kernel_too_big_dilated=_conv("conv2d", (1, 1, 2, 2), (1, 1, 3, 3), dilation=2, padding=1),
    kernel_too_big_valid=_conv("conv1d", (1, 1, 2), (1, 1, 3), padding="valid"),
    empty_spatial=_conv("conv2d", (1, 1, 0, 4), (1, 1, 3, 3)),
    empty_spatial_padded=_conv("conv1d", (1, 1, 0), (1, 1, 3), padding=2),
    rank_conv1d=_conv("conv1d", (2, 3, 4, 5), (1, 3, 3)),
    rank_conv2d=_conv("conv2d", (2, 3), (1, 1, 3, 3)),
    rank_conv3d=_conv("conv3d", (2, 3), (1, 1, 3, 3, 3)),
    rank_transpose1d=_conv("conv_transpose1d", (2, 3, 4, 5), (3, 1, 3)),
    rank_transpose2d=_conv("conv_transpose2d", (2, 3), (1, 1, 3, 3)),
    rank_transpose3d=_conv("conv_transpose3d", (2, 3), (1, 1, 3, 3, 3)),
    weight_rank=_conv("conv1d", (1, 1, 5), (1, 1, 3, 3)),
    weight_too_small=_conv("conv1d", (1, 1, 5), (1, 1)),
    weight_rank_stride=_conv("conv2d", (1, 1, 5, 5), (1, 1, 3)),
    stride_list=_conv("conv2d", (1, 1, 5, 5), (1, 1, 3, 3), stride=(1, 1, 1)),
    stride_one=_conv("conv2d", (1, 1, 5, 5), (1, 1, 3, 3), stride=(1,)),
    padding_list=_conv("conv2d", (1, 1, 5, 5), (1, 1, 3, 3), padding=(1, 1, 1)),
    groups_zero=_conv("conv2d", (1, 1, 5, 5), (1, 1, 3, 3), groups=0),
    groups_too_many=_conv("conv2d", (1, 2, 4, 4), (2, 1, 3, 3), groups=3),
    groups_indivisible=_conv("conv2d", (1, 2, 4, 4), (3, 1, 3, 3), groups=2),
    channels=_conv("conv2d", (1, 1, 5, 5), (2, 1, 3, 3), groups=2),
    stride_zero=_conv("conv2d", (1, 1, 5, 5), (1, 1, 3, 3), stride=0),
    padding_negative=_conv("conv2d", (1, 1, 5, 5), (1, 1, 3, 3), padding=(1, -1)),
    dilation_negative=_conv("conv2d", (1, 1, 5, 5), (1, 1, 3, 3), dilation=-1),
    dilation_zero=_conv("conv2d", (1, 1, 5, 5), (1, 1, 3, 3), dilation=(1, 0)),
    dilation_zero_1d=_conv("conv1d", (1, 1, 5), (1, 1, 3), dilation=0),
    kernel_zero=_conv("conv2d", (1, 1, 5, 5), (1, 1, 0, 3)),
    kernel_zero_dilated=_conv("conv2d", (1, 1, 5, 5), (1, 1, 0, 3), dilation=2),
    kernel_zero_3d=_conv("conv3d", (1, 1, 5, 5, 5), (1, 1, 0, 3, 3)),
    padding_string=_conv("conv2d", (1, 1, 5, 5), (1, 1, 3, 3), padding="foo"),
    same_strided=_conv("conv2d", (1, 1, 5, 5), (1, 1, 3, 3), padding="same", stride=2),
    same_small=_conv("conv2d", (1, 1, 2, 2), (1, 1, 3, 3), padding="same"),
    same_empty=_conv("conv2d", (1, 1, 0, 2), (1, 1, 3, 3), padding="same"),
    zero_batch=_conv("conv2d", (0, 1, 4, 4), (1, 1, 3, 3)),
    zero_batch_3d=_conv("conv3d", (0, 1, 4, 4, 4), (2, 1, 3, 3, 3)),
    zero_batch_transposed=_conv("conv_transpose2d", (0, 1, 4, 4), (1, 3, 3, 3)),
    transposed_channels=_conv("conv_transpose2d", (1, 2, 4, 4), (1, 1, 3, 3)),
    transposed_output_small=_conv("conv_transpose2d", (1, 1, 1, 1), (1, 1, 3, 3), padding=2),
    transposed_output_small_1d=_conv("conv_transpose1d", (1, 1, 1), (1, 1, 1), padding=1),
    transposed_output_small_3d=_conv("conv_transpose3d", (1, 1, 1, 1, 1), (1, 1, 3, 3, 3),
                                     padding=2),
    output_padding=_conv("conv_transpose2d", (1, 1, 4, 4), (1, 1, 3, 3), output_padding=1),
    output_padding_1d=_conv("conv_transpose1d", (1, 1, 4), (1, 1, 3), output_padding=1),
    output_padding_3d=_conv("conv_transpose3d", (1, 1, 4, 4, 4), (1, 1, 3, 3, 3),
                            output_padding=1),
    output_padding_stride=_conv("conv_transpose2d", (1, 1, 5, 5), (1, 1, 3, 3), stride=(2, 1),
                                output_padding=(1, 1)),
    output_padding_negative=_conv("conv_transpose2d", (1, 1, 5, 5), (1, 1, 3, 3),
                                  output_padding=-1, stride=0),
    transposed_dilation_zero=_conv("conv_transpose2d", (1, 1, 5, 5), (1, 1, 3, 3), dilation=0),
    transposed_dilation_zero_3d=_conv("conv_transpose3d", (1, 1, 5, 5, 5), (1, 1, 3, 3, 3),
                                      dilation=0),
    transposed_kernel_zero=_conv("conv_transpose2d", (1, 1, 5, 5), (1, 1, 0, 3)),
    transposed_kernel_zero_3d=_conv("conv_transpose3d", (1, 1, 5, 5, 5), (1, 1, 0, 3, 3)),
    transposed_empty_spatial=_conv("conv_transpose2d", (1, 1, 0, 5), (1, 1, 3, 3)),
    transposed_groups=_conv("conv_transpose2d", (1, 1, 5, 5), (1, 1, 3, 3), groups=0),
    weight_dtype=lambda L: L.nn.functional.conv2d(L.zeros(1, 1, 5, 5),
                                                  L.zeros(1, 1, 3, 3, dtype=L.float64)),
    weight_dtype_after_shape=lambda L: L.nn.functional.conv2d(
        L.zeros(1, 1, 2, 2), L.zeros(1, 1, 3, 3, dtype=L.float64)),
    bias_dtype=lambda L: L.nn.functional.conv2d(L.zeros(1, 1, 5, 5), L.zeros(1, 1, 3, 3),
                                                bias=L.zeros(1, dtype=L.float64)),
    bias_size=lambda L: L.nn.functional.conv2d(L.zeros(1, 1, 4, 4), L.zeros(1, 1, 3, 3),
                                               bias=L.zeros(2)),
    transposed_bias_size=lambda L: L.nn.functional.conv_transpose2d(
        L.zeros(1, 2, 5, 5), L.zeros(2, 1, 3, 3), groups=2, bias=L.zeros(3)),
)


@pytest.mark.parametrize("fn", list(CONV_CASES.values()), ids=list(CONV_CASES))
def test_convolution_errors(torch, fn):
    check_same(torch, fn)


def test_conv_transpose3d_and_module_match_pytorch(torch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 2, 3, 3, 3))
    w = rng.standard_normal((2, 1, 2, 2, 2))
    b = rng.standard_normal(2)
    outs = []
    for L in (ember, torch):
        xs = [L.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = L.nn.functional.conv_transpose3d(*xs, stride=2, groups=2, padding=1,
                                             output_padding=1)
        y.pow(2).sum().backward()
        outs.append([y, *(t.grad for t in xs)])
        assert type(y.grad_fn).__name__ == "ConvolutionBackward0"
    for e, t in zip(*outs):
        np.testing.assert_allclose(to_np(e), to_np(t), rtol=1e-10, atol=1e-10)
    m = ember.nn.ConvTranspose3d(2, 4, 3, stride=2, groups=2)
    assert repr(m) == repr(torch.nn.ConvTranspose3d(2, 4, 3, stride=2, groups=2))
    assert m(ember.zeros(1, 2, 3, 3, 3), output_size=(8, 8, 8)).shape == (1, 4, 8, 8, 8)


# --------------------------------------------------------------------------- pooling

def _pool(name, shape, *args, **kw):
    return lambda L: getattr(L.nn.functional, name)(L.zeros(*shape), *args, **kw)


POOL_CASES = dict(
    max1d_small=_pool("max_pool1d", (1, 1, 2), 3),
    max2d_small=_pool("max_pool2d", (1, 1, 2, 2), 3),
    max3d_small=_pool("max_pool3d", (1, 1, 2, 2, 2), 3),
    avg1d_small=_pool("avg_pool1d", (1, 1, 2), 3),
    avg2d_small=_pool("avg_pool2d", (1, 1, 2, 2), 3),
    avg3d_small=_pool("avg_pool3d", (1, 1, 2, 2, 2), 3),
    avg3d_small_padded=_pool("avg_pool3d", (1, 1, 2, 2, 2), 3, padding=1),
    avg3d_rank=_pool("avg_pool3d", (2, 2), 1),
    avg3d_rank_high=_pool("avg_pool3d", (1, 1, 1, 2, 2, 2), 1),
    avg3d_empty=_pool("avg_pool3d", (1, 1, 0, 2, 2), 1),
    avg3d_empty_channels=_pool("avg_pool3d", (1, 0, 2, 2, 2), 1),
    avg2d_empty_channels=_pool("avg_pool2d", (1, 0, 2, 2), 1),
    avg2d_empty=_pool("avg_pool2d", (1, 1, 0, 4), 2),
    avg1d_empty=_pool("avg_pool1d", (1, 1, 0), 1),
    max1d_empty=_pool("max_pool1d", (1, 1, 0), 1),
    max1d_empty_channels=_pool("max_pool1d", (1, 0, 3), 1),
    max2d_empty=_pool("max_pool2d", (1, 1, 0, 4), 2),
    max2d_empty_channels=_pool("max_pool2d", (1, 0, 4, 4), 2),
    max3d_empty=_pool("max_pool3d", (1, 0, 3, 3, 3), 1),
    max2d_padding=_pool("max_pool2d", (1, 1, 2, 2), 3, padding=2),
    max2d_zero_batch=_pool("max_pool2d", (0, 1, 3, 3), 1),
    adaptive_avg2d_1d=_pool("adaptive_avg_pool2d", (2,), 1),
    adaptive_avg2d_1d_sizes=_pool("adaptive_avg_pool2d", (2,), 2),
    adaptive_avg3d_2d=_pool("adaptive_avg_pool3d", (2, 2), 1),
    adaptive_avg2d_negative=_pool("adaptive_avg_pool2d", (1, 1, 2, 2), (1, -1)),
    adaptive_avg3d_negative=_pool("adaptive_avg_pool3d", (1, 1, 2, 2, 2), -1),
    adaptive_avg1d_negative=_pool("adaptive_avg_pool1d", (1, 1, 2), -1),
    adaptive_max2d_negative=_pool("adaptive_max_pool2d", (2, 1, 2, 2), -1),
    adaptive_max1d_negative=_pool("adaptive_max_pool1d", (1, 1, 2), -1),
    adaptive_avg2d_empty_mean=_pool("adaptive_avg_pool2d", (1, 1, 0, 2), 1),
    adaptive_avg1d_empty_mean=_pool("adaptive_avg_pool1d", (1, 1, 0), 1),
    adaptive_avg3d_empty_mean=_pool("adaptive_avg_pool3d", (1, 1, 0, 1, 1), 1),
    adaptive_avg2d_rank5_mean=_pool("adaptive_avg_pool2d", (2, 1, 1, 2, 2), 1),
    adaptive_avg2d_empty_channels=_pool("adaptive_avg_pool2d", (1, 0, 2, 2), 2),
    adaptive_avg3d_empty_first=_pool("adaptive_avg_pool3d", (2, 0, 2), 2),
    adaptive_max1d_empty=_pool("adaptive_max_pool1d", (1, 1, 0), 1),
    adaptive_max2d_empty=_pool("adaptive_max_pool2d", (1, 0, 2, 2), 2),
    adaptive_none_rank=_pool("adaptive_avg_pool2d", (2, 2), (None, 1)),
)


@pytest.mark.parametrize("fn", list(POOL_CASES.values()), ids=list(POOL_CASES))
def test_pooling_errors(torch, fn):
    check_same(torch, fn)


# --------------------------------------------------------------------------- factories

FACTORY_CASES = {
    # sizes
    "zeros_float": lambda L: L.zeros(2.5),
    "zeros_float_in_tuple": lambda L: L.zeros((2.5, 2)),
    "zeros_float_second": lambda L: L.zeros(2, 2.5),
    "zeros_float_second_tuple": lambda L: L.zeros((2, None)),
    "zeros_two_floats": lambda L: L.zeros(2.5, 2),
    "zeros_str": lambda L: L.zeros("a"),
    "zeros_bool": lambda L: L.zeros(True),
    "zeros_tensor": lambda L: L.zeros(L.tensor([2, 3])),
    "zeros_0d_tensor": lambda L: L.zeros(L.tensor(2), 3),
    "zeros_negative": lambda L: L.zeros(2, -3),
    "empty_negative": lambda L: L.empty(-1),
    "ones_negative": lambda L: L.ones((2, -1)),
    "rand_negative": lambda L: L.rand(2, -1),
    "randn_negative": lambda L: L.randn(-1),
    "full_negative": lambda L: L.full((-1,), 1.0),
    "new_zeros_negative": lambda L: L.zeros(2).new_zeros(-1),
    "new_full_negative": lambda L: L.zeros(2).new_full((-1,), 1.0),
    "size_keyword": lambda L: L.zeros(size=(2, 3)),
    "size_keyword_int": lambda L: L.zeros(size=2),
    "rand_size_keyword": lambda L: L.rand(size=(2,)).shape,
    # dtypes
    "python_int": lambda L: L.zeros(2, dtype=int),
    "python_float": lambda L: L.ones(2, dtype=float),
    "python_bool": lambda L: L.full((2,), 1, dtype=bool),
    "python_complex": lambda L: L.tensor([1], dtype=complex),
    "arange_float": lambda L: L.arange(3, dtype=float),
    "eye_int": lambda L: L.eye(2, dtype=int),
    "like_int": lambda L: L.zeros_like(L.zeros(2), dtype=int),
    "to_int": lambda L: L.zeros(2).to(int),
    "to_dtype_int": lambda L: L.zeros(2).to(dtype=int),
    "type_int": lambda L: L.zeros(2).type(int),
    "type_legacy": lambda L: L.zeros(2).type(L.IntTensor),
    "dtype_str": lambda L: L.zeros(2, dtype="float32"),
    "dtype_numpy": lambda L: L.zeros(2, dtype=np.dtype("float32")),
    "rand_int": lambda L: L.rand(2, dtype=L.int64),
    "rand_python_int": lambda L: L.rand(2, dtype=int),
    "rand_bool": lambda L: L.rand(2, dtype=L.bool),
    "rand_empty_int": lambda L: L.rand(0, dtype=L.int64),
    "randn_int": lambda L: L.randn(2, dtype=L.int64),
    "randn_uint8": lambda L: L.randn(2, dtype=L.uint8),
    "randn_empty_int": lambda L: L.randn(0, dtype=L.int64),
    "rand_like_int": lambda L: L.rand_like(L.zeros(2, dtype=L.int64)),
    "randn_like_int": lambda L: L.randn_like(L.zeros(2, dtype=L.int32)),
    "like_not_tensor": lambda L: L.zeros_like([1, 2]),
    # arange, linspace, eye
    "arange_wrong_sign": lambda L: L.arange(0, 10, -1),
    "arange_negative_end": lambda L: L.arange(-1),
    "arange_down": lambda L: L.arange(10, 0),
    "arange_empty": lambda L: L.arange(0, 0, -1),
    "arange_step_zero": lambda L: L.arange(0, 10, 0),
    "arange_step_nan": lambda L: L.arange(0, 1, float("nan")),
    "arange_inf": lambda L: L.arange(0.0, float("inf")),
    "arange_nan": lambda L: L.arange(float("nan")),
    "arange_minus_inf": lambda L: L.arange(float("-inf"), 0),
    "arange_huge_step": lambda L: L.arange(0, 1, float("inf")),
    "arange_overflow": lambda L: L.arange(0, 10, 1e-20),
    "arange_bool": lambda L: L.arange(0, 3, dtype=L.bool),
    "arange_complex": lambda L: L.arange(3, dtype=L.complex64),
    "arange_int64_truncates": lambda L: L.arange(1.5, 5.7, dtype=L.int64),
    "arange_int64_negative": lambda L: L.arange(-3.5, dtype=L.int64),
    "arange_int64_step": lambda L: L.arange(0, 1, 0.3, dtype=L.int64),
    "arange_int32": lambda L: L.arange(-0.5, 5, 1.5, dtype=L.int32),
    "arange_end_keyword": lambda L: L.arange(end=3),
    "linspace_negative": lambda L: L.linspace(0, 1, -1),
    "linspace_zero": lambda L: L.linspace(0, 1, 0),
    "linspace_bool": lambda L: L.linspace(0, 1, 3, dtype=L.bool),
    "linspace_int": lambda L: L.linspace(0, 10, 5, dtype=L.int64),
    "linspace_uint8_wraps": lambda L: L.linspace(-1, 1, 5, dtype=L.uint8),
    "linspace_int16": lambda L: L.linspace(3, -3, 4, dtype=L.int16),
    "linspace_tensor_1d": lambda L: L.linspace(L.tensor([0.0]), 1, 3),
    "linspace_tensor_0d": lambda L: L.linspace(L.tensor(0.0), 1, 3),
    "eye_negative": lambda L: L.eye(-1),
    "eye_negative_m": lambda L: L.eye(2, -1),
    "eye_float": lambda L: L.eye(2.5),
    # randint, randperm
    "randint_low_high": lambda L: L.randint(5, 3, (2,)),
    "randint_equal": lambda L: L.randint(3, 3, (2,)),
    "randint_high_zero": lambda L: L.randint(0, (2,)),
    "randint_high_negative": lambda L: L.randint(-1, (2,)),
    "randint_size_int": lambda L: L.randint(3, 2),
    "randint_size_float": lambda L: L.randint(3, (2.5,)),
    "randint_negative_size": lambda L: L.randint(3, (-1,)),
    "randint_bool": lambda L: L.randint(0, 5, (2,), dtype=L.bool),
    "randint_bool_ok": lambda L: L.randint(0, 2, (2,), dtype=L.bool).shape,
    "randint_uint8": lambda L: L.randint(0, 300, (2,), dtype=L.uint8),
    "randint_uint8_from": lambda L: L.randint(-1, 5, (2,), dtype=L.uint8),
    "randint_int8": lambda L: L.randint(-2 ** 40, 0, (2,), dtype=L.int8),
    "randint_int16": lambda L: L.randint(-2 ** 40, 0, (2,), dtype=L.int16),
    "randint_int32": lambda L: L.randint(0, 2 ** 31 + 1, (2,), dtype=L.int32),
    "randint_half": lambda L: L.randint(0, 70000, (2,), dtype=L.float16),
    "randint_complex": lambda L: L.randint(0, 5, (2,), dtype=L.complex64),
    "randint_keywords": lambda L: L.randint(high=3, size=(2,)).shape,
    "randint_like_zero": lambda L: L.randint_like(L.zeros(2), 0),
    "randint_like_bounds": lambda L: L.randint_like(L.zeros(2), 3, 1),
    "randint_like_uint8": lambda L: L.randint_like(L.zeros(2, dtype=L.uint8), 300),
    "randperm_negative": lambda L: L.randperm(-1),
    "randperm_bool": lambda L: L.randperm(3, dtype=L.bool),
    "randperm_complex": lambda L: L.randperm(3, dtype=L.complex64),
    "randperm_uint8": lambda L: L.randperm(300, dtype=L.uint8),
    "randperm_uint8_ok": lambda L: L.randperm(256, dtype=L.uint8).shape,
    "randperm_float": lambda L: L.randperm(2 ** 24 + 2, dtype=L.float32),
    "randperm_half": lambda L: L.randperm(70000, dtype=L.float16),
    "randperm_float_n": lambda L: L.randperm(2.5),
    # full
    "full_int_size": lambda L: L.full(2, 1.0),
    "full_float_size": lambda L: L.full((2.5,), 1.0),
    "full_float_second": lambda L: L.full([2, 2.5], 1.0),
    "full_tensor": lambda L: L.full((2,), L.zeros(2)),
    "full_0d_tensor": lambda L: L.full((2,), L.tensor(3)),
    "full_list": lambda L: L.full((2,), [1, 2]),
    "full_none": lambda L: L.full((2,), None),
    "full_numpy": lambda L: L.full((2,), np.float32(1.5)),
    "full_uint8_wraps": lambda L: L.full((2,), -1, dtype=L.uint8),
    "full_uint8_overflow": lambda L: L.full((2,), 300, dtype=L.uint8),
    "full_int32_overflow": lambda L: L.full((2,), 2 ** 40, dtype=L.int32),
    "full_int8_inf": lambda L: L.full((2,), float("inf"), dtype=L.int8),
    "full_int64_nan": lambda L: L.full((2,), float("nan"), dtype=L.int64),
    "full_float32_overflow": lambda L: L.full((2,), 1e300, dtype=L.float32),
    "full_float32_inf": lambda L: L.full((2,), float("inf"), dtype=L.float32),
    "full_half_overflow": lambda L: L.full((2,), 1e300, dtype=L.float16),
    "full_complex_real": lambda L: L.full((2,), 1 + 2j, dtype=L.float32),
    "full_complex_bool": lambda L: L.full((2,), 1j, dtype=L.bool),
    "full_truncates": lambda L: L.full((2,), 1.5, dtype=L.int64),
    "full_like_overflow": lambda L: L.full_like(L.zeros(2, dtype=L.uint8), 300),
    "full_int_requires_grad": lambda L: L.full((2,), 1, requires_grad=True),
}


@pytest.mark.parametrize("fn", list(FACTORY_CASES.values()), ids=list(FACTORY_CASES))
def test_factory_errors(torch, fn):
    check_same(torch, fn)


# --------------------------------------------------------------------------- saved outputs

def _multi_output_ops(L):
    F = L.nn.functional
    return {
        "max": lambda x: L.max(x, 1), "min": lambda x: x.min(1),
        "sort": lambda x: L.sort(x, 1), "sort_stable": lambda x: L.sort(x, stable=True),
        "topk": lambda x: L.topk(x, 2, 1), "kthvalue": lambda x: L.kthvalue(x, 2, 1),
        "median": lambda x: L.median(x, 1), "mode": lambda x: L.mode(x, 1),
        "cummax": lambda x: L.cummax(x, 1), "cummin": lambda x: L.cummin(x, 1),
        "aminmax": lambda x: L.aminmax(x, dim=1), "var_mean": lambda x: L.var_mean(x, 1),
        "std_mean": lambda x: L.std_mean(x, 1),
        "slogdet": lambda x: L.linalg.slogdet(x),
        "qr": lambda x: L.linalg.qr(x),
        "eigh": lambda x: L.linalg.eigh(x + x.mT),
        "svd": lambda x: L.linalg.svd(x, full_matrices=False),
        # (pooling gets a copy: its saved input would be a view, which ember names otherwise)
        "max_pool2d": lambda x: F.max_pool2d((x * 1)[None, None], 2, 1, return_indices=True),
        "max_pool1d": lambda x: F.max_pool1d(x * 1, 2, return_indices=True),
        "adaptive_max_pool2d": lambda x: F.adaptive_max_pool2d((x * 1)[None], 2, True),
    }


def _modify_then_backward(L, name, which):
    """Run the op, write into output ``which`` (or its input, "input") in place, backward."""
    rng = np.random.default_rng(0)
    x = L.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    y = x * 1
    outs = _multi_output_ops(L)[name](y)
    with L.no_grad():
        (y if which == "input" else outs[which]).add_(1)
    L.autograd.backward([o.sum() for o in outs if o.dtype.is_floating_point])
    return x.grad


@pytest.mark.parametrize("name,which", [(name, which) for name in _multi_output_ops(ember)
                                        for which in (0, 1, 2, "input")
                                        if which != 2 or name == "svd"])
def test_outputs_saved_as_pytorch_saves_them(torch, name, which):
    """A node saves only the outputs PyTorch's derivatives.yaml saves: writing into the others
    in place leaves its backward valid (median's values), writing into those it saves does
    not (its indices)."""
    check_same(torch, lambda L: _modify_then_backward(L, name, which), explained=True)


# --------------------------------------------------------------------------- cross entropy

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("targets", ["all_ignored", "some_ignored", "probabilities",
                                     "spatial_ignored"])
def test_cross_entropy_ignored_targets(torch, reduction, weighted, smoothing, targets):
    """All targets ignored: NaN loss for 'mean' (0/0) and zero gradients, not NaN ones."""
    rng = np.random.default_rng(0)
    shape = (3, 4, 2) if targets == "spatial_ignored" else (3, 4)
    x = rng.standard_normal(shape)
    t = {"all_ignored": np.full(3, -100), "some_ignored": np.array([1, -100, 2]),
         "probabilities": rng.uniform(size=(3, 4)),
         "spatial_ignored": np.full((3, 2), -100)}[targets]

    def fn(L):
        xs = L.tensor(x, requires_grad=True)
        w = L.tensor([1.0, 2.0, 3.0, 4.0], dtype=L.float64) if weighted else None
        loss = L.nn.functional.cross_entropy(xs, L.tensor(t), weight=w, reduction=reduction,
                                             label_smoothing=smoothing)
        loss.sum().backward()
        return loss, xs.grad
    check_same(torch, fn)


def test_masked_fill_gradient_of_an_infinite_gradient_is_zero_where_filled(torch):
    def fn(L):
        x = L.zeros(3, requires_grad=True)
        value = L.tensor(2.0, requires_grad=True)
        y = (x * 1).masked_fill(L.tensor([True, False, True]), value)
        (y * math.inf).sum().backward()
        return x.grad, value.grad
    check_same(torch, fn)


# --------------------------------------------------------------------------- mode

def _mode_inputs():
    rng = np.random.default_rng(1)
    for n in (1, 5, 16, 17, 40, 257):
        yield rng.integers(0, 4, (3, n))                              # ties, small and long
        yield rng.integers(0, max(2, n // 3), (2, n)).astype(np.float32)
        x = rng.integers(0, 5, (2, n)).astype(np.float64)
        x[rng.uniform(size=x.shape) < 0.2] = np.nan                    # NaN breaks the order
        yield x
        yield np.sort(rng.integers(0, 6, (2, n)), axis=1)[:, ::-1].copy()  # sorted, reversed
    yield np.array([[True, False, True, True]])


@pytest.mark.parametrize("x", list(_mode_inputs()), ids=lambda x: f"{x.dtype}{x.shape}")
def test_mode_values_and_indices(torch, x):
    """The index among equal values is where PyTorch's std::sort leaves them."""
    check_same(torch, lambda L: L.mode(L.tensor(x), 1))
    check_same(torch, lambda L: L.tensor(x).mode(dim=0, keepdim=True))


@cases(
    empty=lambda L: L.mode(L.zeros(0)),
    empty_dim=lambda L: L.mode(L.zeros(2, 0), 1),
    empty_other=lambda L: L.mode(L.zeros(0, 2), 1),
    complex=lambda L: L.mode(L.tensor([1 + 1j, 2])),
    half=lambda L: L.mode(L.tensor([1.0, 2, 2], dtype=L.float16)),
    int8=lambda L: L.mode(L.tensor([1, 2, 2], dtype=L.int8)),
    keywords=lambda L: L.mode(input=L.tensor([1, 2, 2]), dim=0, keepdim=True),
    grad_fn=lambda L: L.mode(L.tensor([[1.0, 2, 2], [3, 3, 1]], requires_grad=True), 1),
    out=lambda L: L.mode(L.tensor([[1.0, 2, 2]]), 1,
                         out=(L.zeros(0), L.zeros(0, dtype=L.int64))),
)
def test_mode_edges(torch, fn):
    check_same(torch, fn)


def test_mode_gradient(torch):
    """Finite differences need values no small change reorders (distinct ones: the mode is the
    smallest); PyTorch decides among ties."""
    d = ember.tensor([[1.0, 2.5, 2.0, 0.5], [3.0, 4.0, 1.5, 1.0]], dtype=ember.float64,
                     requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: ember.mode(a * 1, 1).values, (d,))
    assert ember.autograd.gradgradcheck(lambda a: ember.mode(a * 1, 0).values ** 2, (d,))
    x = ember.tensor([[1.0, 2.0, 2.0, 0.5], [3.0, 3.0, 1.0, 1.0]], dtype=ember.float64)

    def fn(L):
        a = L.tensor(to_np(x), requires_grad=True)
        v = L.mode(a, 1, keepdim=True).values
        (v * L.tensor([[2.0], [3.0]], dtype=L.float64)).sum().backward()
        return v, a.grad
    check_same(torch, fn)


# --------------------------------------------------------------------------- angle

@cases(
    float=lambda L: L.angle(L.tensor([-1.0, 0.0, -0.0, float("nan"), 2.0])),
    int=lambda L: L.angle(L.tensor([-1, 0, 2])),
    bool=lambda L: L.tensor([True, False]).angle(),
    uint8=lambda L: L.angle(L.tensor([1, 2], dtype=L.uint8)),
    half=lambda L: L.angle(L.tensor([-1.0], dtype=L.float16)),
    complex=lambda L: L.angle(L.tensor([1 + 1j, 0j, -1 + 0j, -1 - 0j])),
    complex128=lambda L: L.angle(L.tensor([3 - 4j], dtype=L.complex128)),
    not_tensor=lambda L: L.angle([1.0]),
    out=lambda L: L.angle(L.tensor([-1.0]), out=L.zeros(3)),
    out_int=lambda L: L.angle(L.tensor([-1.0]), out=L.zeros(1, dtype=L.int64)),
    no_inplace=lambda L: L.zeros(1).angle_(),
)
def test_angle_values(torch, fn):
    check_same(torch, fn)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_angle_gradient_matches_pytorch(torch, dtype):
    rng = np.random.default_rng(0)
    z = rng.standard_normal(5) + (1j * rng.standard_normal(5) if dtype == "complex128" else 0)
    z[0] = 0

    def fn(L):
        a = L.tensor(z, dtype=getattr(L, dtype), requires_grad=True)
        y = L.angle(a)
        (y * L.arange(5.0, dtype=L.float64)).sum().backward()
        return y, a.grad
    check_same(torch, fn)

    def double(L):  # second derivative, through the recorded rule
        a = L.tensor(z[1:], dtype=getattr(L, dtype), requires_grad=True)
        (g,) = L.autograd.grad(L.angle(a).sum(), a, create_graph=True)
        (gg,) = L.autograd.grad((g.abs() ** 2).sum(), a)
        return g, gg
    check_same(torch, double)


def test_angle_gradcheck_real_and_complex():
    x = ember.tensor([-1.5, 0.5, 2.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: ember.angle(a), (x,))
    # complex: PyTorch's convention, grad = dL/dre + i dL/dim, against central differences
    z = np.array([1 + 2j, -0.5 + 0.25j, -3 - 1j])
    a = ember.tensor(z, requires_grad=True)
    ember.angle(a).sum().backward()
    eps = 1e-7

    def slope(direction):  # d sum(angle(z)) / d t along z + t * direction, per element
        return np.array([(np.angle(z + eps * direction * e).sum()
                          - np.angle(z - eps * direction * e).sum()) / (2 * eps)
                         for e in np.eye(3)])
    np.testing.assert_allclose(a.grad.numpy(), slope(1) + 1j * slope(1j), rtol=1e-6, atol=1e-8)


# --------------------------------------------------------------------------- names and keywords

def test_is_inference_mode_enabled(torch):
    for L in (ember, torch):
        assert not L.is_inference_mode_enabled()
        with L.inference_mode():
            assert L.is_inference_mode_enabled() and not L.is_grad_enabled()
            with L.inference_mode(False):
                assert not L.is_inference_mode_enabled()
        assert not L.is_inference_mode_enabled()


X23 = "L.arange(6.0).reshape(2, 3)"

KEYWORD_CASES = {
    "flip_dims": "L.flip(input=X, dims=(0,))",
    "flip_method_dims": "X.flip(dims=(0, 1))",
    "permute_dims": "L.permute(X, dims=(1, 0))",
    "permute_method_dims": "X.permute(dims=(1, 0))",
    "tile_dims": "L.tile(X, dims=(2,))",
    "reshape_shape": "L.reshape(X, shape=(3, 2))",
    "view_size": "X.view(size=(3, 2))",
    "expand_size": "X.expand(size=(2, 2, 3))",
    "repeat_repeats": "X.repeat(repeats=(2, 1))",
    "swapaxes_axes": "L.swapaxes(X, axis0=0, axis1=1)",
    "swapaxes_method_axes": "X.swapaxes(axis0=0, axis1=1)",
    "swapdims_dims": "L.swapdims(X, dim0=0, dim1=1)",
    "transpose_dims": "L.transpose(X, dim0=0, dim1=1)",
    "movedim_keywords": "L.movedim(X, source=0, destination=1)",
    "sort_keywords": "L.sort(X, dim=0, descending=True, stable=True)",
    "cumsum_keywords": "L.cumsum(input=X, dim=0, dtype=L.float64)",
    "cummax_keywords": "L.cummax(input=X, dim=1)",
    "median_keywords": "L.median(input=X, dim=0, keepdim=True)",
    "kthvalue_keywords": "L.kthvalue(input=X, k=1, dim=0, keepdim=True)",
    "logcumsumexp_keywords": "L.logcumsumexp(input=X, dim=0)",
    "sin_out": "L.sin(X, out=L.empty(2, 3))",
    "cumsum_out": "L.cumsum(X, 0, out=L.empty(0))",
    "cumsum_out_dtype": "L.cumsum(X, 1, out=L.zeros(0, dtype=L.int32))",
    "cumsum_out_dtype_mismatch": "L.cumsum(X, 1, dtype=L.float64, out=L.zeros(0))",
    "sort_out": "L.sort(X, out=(L.empty(0), L.empty(0, dtype=L.int64)))",
    "sort_out_bad_indices": "L.sort(X, out=(L.empty(0), L.empty(0, dtype=L.int32)))",
    "cummax_out": "L.cummax(X, 0, out=(L.empty(0), L.empty(0, dtype=L.int64)))",
    "cummax_out_bad_indices": "L.cummax(X, 0, out=(L.empty(0), L.empty(0)))",
    "conv2d_keywords": "L.nn.functional.conv2d(input=X[None, None], weight=L.ones(1, 1, 1, 1))",
    "arange_keywords": "L.arange(start=1, end=4, step=2)",
    "full_keywords": "L.full(size=(2,), fill_value=3)",
}


@pytest.mark.parametrize("code", list(KEYWORD_CASES.values()), ids=list(KEYWORD_CASES))
def test_pytorch_keyword_names(torch, code):
    check_same(torch, lambda L: eval(code, {"L": L, "X": eval(X23, {"L": L})}))


# --------------------------------------------------------------------------- errors mutate nothing

MUTATING_CASES = {
    "transpose_": "x.transpose_(0, 5)",
    "unsqueeze_": "x.unsqueeze_(5)",
    "squeeze_": "x.squeeze_(5)",
    "swapaxes_": "x.swapaxes_(0, 9)",
    "cumsum_": "x.cumsum_(5)",
    "t_": "x.unsqueeze(0).t_()",
    "add_": "x.add_(torch.zeros(4))",
    "copy_": "x.copy_(torch.zeros(3, 2))",
    "masked_fill_": "x.masked_fill_(torch.tensor([True]), torch.zeros(2))",
    "index_fill_": "x.index_fill_(5, torch.tensor([0]), 1.0)",
    "sort_out": "torch.sort(x, out=(v, i))",
    "cummax_out": "torch.cummax(x, 1, out=(v, i))",
    "angle_out": "torch.angle(x, out=v.long())",
}


@pytest.mark.parametrize("code", list(MUTATING_CASES.values()), ids=list(MUTATING_CASES))
def test_errors_leave_tensors_unchanged(torch, code):
    """The exception is PyTorch's, and the tensors the call was handed are as they were
    (``sort``'s values ``out``: PyTorch resizes it before it refuses the indices; ember
    leaves it alone, as every error here should)."""
    def fn(L):
        x = L.arange(6.0).reshape(2, 3)
        v, i = L.zeros(2), L.zeros(2, dtype=L.float32)
        try:
            exec(code, {"x": x, "torch": L, "v": v, "i": i})
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e), x.shape, x.tolist(), x._version, i.tolist()
        raise AssertionError("no error")
    mine, theirs = fn(ember), fn(torch)
    assert mine[:2] == theirs[:2]
    assert tuple(mine[2]) == (2, 3) and mine[3] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert mine[4] == 0 and mine[5] == [0.0, 0.0]
    assert tuple(mine[2]) == tuple(theirs[2]) and mine[3:] == theirs[3:]
