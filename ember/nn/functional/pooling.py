"""Pooling of ``torch.nn.functional``: max, average, adaptive, power-average (``lp_pool*``)
pooling and ``max_unpool*``, with PyTorch's argument checks and messages; kernels in
``ember/ops/nn/pooling.py``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Literal, overload

import numpy as np

from ... import _creation, _recording
from ..._tensor import Tensor
from ...ops import batching
from ...ops import pointwise as _pw
from ...ops.autocast import autocast_op
from ...ops.nn import _taps
from ...ops.nn import pooling as _pooling
from ...ops.registry import saves_also
from .activation import relu

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..._typing import IntOrInts

# --------------------------------------------------------------------------- pooling

_WORDS = {1: "one", 2: "two", 3: "three"}
_DIM_NAMES = {1: ("W",), 2: ("H", "W"), 3: ("T", "H", "W")}


def _pool_args(name, nd, kernel_size, stride, padding, dilation=1):
    """Kernel, stride, padding, dilation as ``nd``-tuples (stride defaults to the kernel)."""
    words = _WORDS[nd]

    def expand(value, label, rule):
        value = tuple(value) if isinstance(value, (tuple, list)) else (value,)
        if len(value) not in (1, nd):
            raise RuntimeError(f"{name}: {label} {rule} {words} ints")
        return value * nd if len(value) == 1 else value

    kernel = expand(kernel_size, "kernel_size", "must either be a single int, or a tuple of")
    if _no_stride(stride):
        stride = kernel
    else:
        stride = expand(stride, "stride", "must either be omitted, a single int, or a tuple of")
    padding = expand(padding, "padding", "must either be a single int, or a tuple of")
    dilation = expand(dilation, "dilation", "must be either a single int, or a tuple of")
    return kernel, stride, padding, dilation


def _pool_output(input, nd, kernel, stride, padding, dilation, ceil_mode, name=None):
    """PyTorch's pooling shape checks; returns the output sizes. ``name``: the 3-d check's
    (average pooling's wants the input at least the size of the kernel)."""
    names = _DIM_NAMES[nd]
    outs = []
    for n, k, s, p, d in zip(input.shape[-nd:], kernel, stride, padding, dilation):
        if s == 0:
            raise RuntimeError("stride should not be zero")
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError("pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
        outs.append(_taps.pool_output_size(n, k, s, p, d, ceil_mode))

    def listing(prefix, values):
        return " ".join(f"{prefix}{a}: {v}" for a, v in zip(names, values))
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got "
                           f"{listing('k', kernel)}")
    if min(stride) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got {listing('d', stride)}")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got "
                           f"{listing('dilation', dilation)}")
    _check_pool_sizes(input, nd, kernel, name)
    if any(p > k // 2 for p, k in zip(padding, kernel)):
        if nd == 2:
            raise RuntimeError(
                f"pad should be smaller than or equal to half of kernel size, but got padW = "
                f"{padding[1]}, padH = {padding[0]}, kW = {kernel[1]}, kH = {kernel[0]}")
        raise RuntimeError(
            f"pad should be smaller than or equal to half of kernel size, but got kT: "
            f"{kernel[0]} kW: {kernel[2]} kH: {kernel[1]} padT: {padding[0]} padW: "
            f"{padding[2]} padH: {padding[1]}")
    if min(outs) < 1:
        sizes = "x".join(map(str, input.shape[-nd - 1:]))
        out = "x".join(map(str, [input.shape[-nd - 1]] + outs))
        raise RuntimeError(f"Given input size: ({sizes}). Calculated output size: ({out}). "
                           "Output size is too small")
    return outs


def _check_pool_input(input, nd):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for "
                           "input")


def _check_pool_sizes(input, nd, kernel, name):
    """The input-size checks of ATen's pool2d_shape_check / pool3d_shape_check."""
    shape = list(input.shape)
    if nd == 2 and (input.ndim not in (3, 4) or 0 in shape[-3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
                           f"for input, but got:{shape}")
    if nd == 3 and 0 in shape[-4:]:
        raise RuntimeError(f"{name}: Expected input's non-batch dimensions to have positive "
                           f"length, but input has a shape of {shape} and non-batch dimension 0 "
                           "has length zero!")
    if nd == 3 and name == "avg_pool3d()" and any(n < k for n, k in zip(shape[-3:], kernel)):
        raise RuntimeError(f"input image (T: {shape[-3]} H: {shape[-2]} W: {shape[-1]}) smaller "
                           f"than kernel size (kT: {kernel[0]} kH: {kernel[1]} kW: {kernel[2]})")


def _max_pool(nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    kernel, stride, padding, dilation = _pool_args(f"max_pool{nd}d", nd, kernel_size, stride,
                                                   padding, dilation)
    _check_pool_input(input, nd)
    _pool_output(input, nd, kernel, stride, padding, dilation, ceil_mode,
                 "max_pool3d_with_indices_out_cpu_template()")
    op = _pooling._max_pool2d if nd == 2 else _pooling._max_pool3d
    saved = {}
    out = op(input, kernel, stride, padding, dilation, bool(ceil_mode), saved)
    return (out, _indices(saved, out)) if return_indices else out


def _indices(saved, out):
    """The indices a max-pooling op saved, as an int64 tensor (a copy: the node keeps its own),
    shaped like its output ``out`` (under vmap: batched like it). The node checks its version,
    as PyTorch's, which saves the very tensor it returns."""
    indices = Tensor._make(saved["indices"].copy(), None, False)
    if batching.levels_of(out):
        return batching.wrap(indices.reshape(out._value.shape), out._levels)
    saves_also(out, indices)
    return indices


def _one(value, message):
    """A 1-d pooling argument as an int; ``message`` (with ``{n}``) for a longer sequence."""
    if isinstance(value, (tuple, list)):
        if len(value) != 1:
            raise RuntimeError(message.format(n=len(value)))
        return value[0]
    return value


def _no_stride(stride):
    return stride is None or (isinstance(stride, (tuple, list)) and not stride)


def _check_1d_input(input, name):
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           f"for argument #1 'self' (while checking arguments for {name})")


@overload
def max_pool1d(input: Tensor, kernel_size: IntOrInts, stride: IntOrInts | None = ...,
               padding: IntOrInts = ..., dilation: IntOrInts = ..., ceil_mode: bool = ...,
               return_indices: Literal[False] = ...) -> Tensor: ...
@overload
def max_pool1d(input: Tensor, kernel_size: IntOrInts, stride: IntOrInts | None, padding: IntOrInts,
               dilation: IntOrInts, ceil_mode: bool,
               return_indices: Literal[True]) -> tuple[Tensor, Tensor]: ...
@overload
def max_pool1d(input: Tensor, kernel_size: IntOrInts, stride: IntOrInts | None = ...,
               padding: IntOrInts = ..., dilation: IntOrInts = ..., ceil_mode: bool = ..., *,
               return_indices: Literal[True]) -> tuple[Tensor, Tensor]: ...
def max_pool1d(input: Tensor, kernel_size: IntOrInts, stride: IntOrInts | None = None,
               padding: IntOrInts = 0, dilation: IntOrInts = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """1-d max pooling: PyTorch's 2-d op on a height-1 view."""
    if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")
    size = "of size 1 but got size {n}"
    k = _one(kernel_size, "max_pool1d() kernel_size must be an int, list of ints or tuple of "
                          "ints " + size)
    s = k if _no_stride(stride) else _one(
        stride, "max_pool1d() stride must be None, an int, list of ints, or tuple of ints " + size)
    p = _one(padding, "max_pool1d() padding must be an int, list of ints, or tuple of ints " + size)
    d = _one(dilation,
             "max_pool1d() dilation must be an int, list of ints or tuple of ints " + size)
    for ok, message in ((k > 0, f"kernel_size must be greater than zero, but got {k}"),
                        (s > 0, f"stride must be greater than zero, but got {s}"),
                        (p >= 0, f"padding must be non-negative, but got {p}"),
                        (p <= k // 2, "padding should be at most half of kernel size, but got "
                                      f"padding={p} and kernel_size={k}"),
                        (d > 0, f"dilation must be greater than zero, but got {d}")):
        if not ok:
            raise RuntimeError(f"max_pool1d() {message}")
    out = _taps.pool_output_size(input.shape[-1], k, s, p, d, ceil_mode)
    if out <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    res = _max_pool(2, input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode,
                    return_indices)
    return (res[0].squeeze(-2), res[1].squeeze(-2)) if return_indices else res.squeeze(-2)


@overload
def max_pool2d(input: Tensor, kernel_size: IntOrInts, stride: IntOrInts | None = ...,
               padding: IntOrInts = ..., dilation: IntOrInts = ..., ceil_mode: bool = ...,
               return_indices: Literal[False] = ...) -> Tensor: ...
@overload
def max_pool2d(input: Tensor, kernel_size: IntOrInts, stride: IntOrInts | None, padding: IntOrInts,
               dilation: IntOrInts, ceil_mode: bool,
               return_indices: Literal[True]) -> tuple[Tensor, Tensor]: ...
@overload
def max_pool2d(input: Tensor, kernel_size: IntOrInts, stride: IntOrInts | None = ...,
               padding: IntOrInts = ..., dilation: IntOrInts = ..., ceil_mode: bool = ..., *,
               return_indices: Literal[True]) -> tuple[Tensor, Tensor]: ...
def max_pool2d(input: Tensor, kernel_size: IntOrInts, stride: IntOrInts | None = None,
               padding: IntOrInts = 0, dilation: IntOrInts = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """2-d max pooling; the gradient flows to each window's maximum."""
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


@overload
def max_pool3d(input: Tensor, kernel_size: IntOrInts, stride: IntOrInts | None = ...,
               padding: IntOrInts = ..., dilation: IntOrInts = ..., ceil_mode: bool = ...,
               return_indices: Literal[False] = ...) -> Tensor: ...
@overload
def max_pool3d(input: Tensor, kernel_size: IntOrInts, stride: IntOrInts | None, padding: IntOrInts,
               dilation: IntOrInts, ceil_mode: bool,
               return_indices: Literal[True]) -> tuple[Tensor, Tensor]: ...
@overload
def max_pool3d(input: Tensor, kernel_size: IntOrInts, stride: IntOrInts | None = ...,
               padding: IntOrInts = ..., dilation: IntOrInts = ..., ceil_mode: bool = ..., *,
               return_indices: Literal[True]) -> tuple[Tensor, Tensor]: ...
def max_pool3d(input: Tensor, kernel_size: IntOrInts, stride: IntOrInts | None = None,
               padding: IntOrInts = 0, dilation: IntOrInts = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """3-d max pooling; the gradient flows to each window's maximum. (Under autocast, as in
    PyTorch, float32 without indices, PyTorch's ``max_pool3d``, which is on its list, and the
    input's dtype with them, its ``max_pool3d_with_indices``, which is not.)"""
    if return_indices:
        return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, True)
    return _max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)


@autocast_op("max_pool3d")
def _max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode):
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, False)


def _avg_pool(nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override):
    kernel, stride, padding, _ = _pool_args(f"avg_pool{nd}d", nd, kernel_size, stride, padding)
    if nd == 3:
        _check_pool_input(input, nd)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if input.ndim < nd + 1:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, "
                         f"{input.ndim - 1}], but got {-nd - 1})")
    if input.ndim > nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with optional "
                           f"0 dim batch size for input, but got:{list(input.shape)}")
    _pool_output(input, nd, kernel, stride, padding, (1,) * nd, ceil_mode, "avg_pool3d()")
    op = _pooling._avg_pool2d if nd == 2 else _pooling._avg_pool3d
    return op(input, kernel, stride, padding, bool(ceil_mode), bool(count_include_pad),
              divisor_override)


def avg_pool1d(input: Tensor, kernel_size: IntOrInts, stride: IntOrInts | None = None,
               padding: IntOrInts = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """1-d average pooling: PyTorch's 2-d op on a height-1 view."""
    _check_1d_input(input, "avg_pool1d")
    message = "avg_pool1d() argument '{}' should contain one int (got {{n}})"
    k = _one(kernel_size, message.format("kernel_size"))
    s = k if _no_stride(stride) else _one(stride, message.format("stride"))
    p = _one(padding, message.format("padding"))
    out = _avg_pool(2, input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode,
                    count_include_pad, None)
    return out.squeeze(-2)


def avg_pool2d(input: Tensor, kernel_size: IntOrInts, stride: IntOrInts | None = None,
               padding: IntOrInts = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """2-d average pooling."""
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


@autocast_op("avg_pool3d")
def avg_pool3d(input: Tensor, kernel_size: IntOrInts, stride: IntOrInts | None = None,
               padding: IntOrInts = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """3-d average pooling."""
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def _adaptive_sizes(input, output_size, nd):
    """``output_size`` as a tuple, ``None`` taking the input's size (``_list_with_default``)."""
    if not isinstance(output_size, (tuple, list)):
        return (output_size,) * nd
    if None in output_size and input.ndim <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    return tuple(n if o is None else o for o, n in zip(output_size,
                                                       input.shape[-len(output_size):]))


def _check_adaptive_input(name, nd, input, dims, colon=""):
    """The rank and the non-zero sizes (of ``dims``) adaptive pooling wants."""
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got{colon} "
                           f"{list(input.shape)}")
    _check_nonzero_sizes(name, input, dims)


def _check_nonzero_sizes(name, input, dims):
    for dim in dims:
        if input.shape[dim] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {dim} being empty")


def _adaptive_avg(nd, input, output_size):
    name = f"adaptive_avg_pool{nd}d"
    sizes = _adaptive_sizes(input, output_size, nd)
    if len(sizes) != nd:
        raise RuntimeError(f"{name}: output_size must be {nd}")
    if min(sizes) < 0:
        shown = ", ".join(map(str, sizes[:2])) + "".join(f",{s}" for s in sizes[2:])
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{shown}}}")
    if all(o == 1 for o in sizes):  # PyTorch takes the mean (no more checks), as here
        return input.mean(tuple(range(-1, -nd - 1, -1)), keepdim=True)
    if nd == 3:  # (the 3-d op checks the sizes first)
        _check_nonzero_sizes(name, input, range(1, input.ndim))
    _check_adaptive_input(name, nd, input, (input.ndim - 2, input.ndim - 1))
    op = _pooling._adaptive_avg_pool2d if nd == 2 else _pooling._adaptive_avg_pool3d
    return op(input, sizes)


def adaptive_avg_pool1d(input: Tensor, output_size: IntOrInts) -> Tensor:
    """1-d average pooling to a fixed output size: the 2-d op on a height-1 view."""
    _check_1d_input(input, "adaptive_avg_pool1d")
    size = _one(output_size, "adaptive_avg_pool1d() argument 'output_size' should contain one "
                             "int (got {n})")
    return _adaptive_avg(2, input.unsqueeze(-2), (1, size)).squeeze(-2)


def adaptive_avg_pool2d(input: Tensor, output_size: int | None | Sequence[int | None]) -> Tensor:
    """2-d average pooling to a fixed output size (PyTorch's window boundaries)."""
    return _adaptive_avg(2, input, output_size)


@autocast_op("adaptive_avg_pool3d")
def adaptive_avg_pool3d(input: Tensor, output_size: int | None | Sequence[int | None]) -> Tensor:
    """3-d average pooling to a fixed output size (PyTorch's window boundaries)."""
    return _adaptive_avg(3, input, output_size)


def _adaptive_max(nd, input, output_size, return_indices):
    name = f"adaptive_max_pool{nd}d"
    sizes = _adaptive_sizes(input, output_size, nd)
    _check_adaptive_input(name, nd, input, range(1, input.ndim), colon=":")
    if len(sizes) != nd:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nd}")
    _creation.check_sizes(tuple(input.shape[:-nd]) + sizes)
    op = _pooling._adaptive_max_pool2d if nd == 2 else _pooling._adaptive_max_pool3d
    saved = {}
    out = op(input, sizes, saved)
    return (out, _indices(saved, out)) if return_indices else out


@overload
def adaptive_max_pool1d(input: Tensor, output_size: IntOrInts,
                        return_indices: Literal[False] = ...) -> Tensor: ...
@overload
def adaptive_max_pool1d(input: Tensor, output_size: IntOrInts,
                        return_indices: Literal[True]) -> tuple[Tensor, Tensor]: ...
def adaptive_max_pool1d(input: Tensor, output_size: IntOrInts,
                        return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """1-d max pooling to a fixed output size: the 2-d op on a height-1 view."""
    _check_1d_input(input, "adaptive_max_pool1d")
    size = _one(output_size, "adaptive_max_pool1d() argument 'output_size' should contain one "
                             "int (got {n})")
    _check_nonzero_sizes("adaptive_max_pool1d", input, range(1, input.ndim))
    res = _adaptive_max(2, input.unsqueeze(-2), (1, size), return_indices)
    return (res[0].squeeze(-2), res[1].squeeze(-2)) if return_indices else res.squeeze(-2)


@overload
def adaptive_max_pool2d(input: Tensor, output_size: IntOrInts,
                        return_indices: Literal[False] = ...) -> Tensor: ...
@overload
def adaptive_max_pool2d(input: Tensor, output_size: IntOrInts,
                        return_indices: Literal[True]) -> tuple[Tensor, Tensor]: ...
def adaptive_max_pool2d(input: Tensor, output_size: IntOrInts,
                        return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """2-d max pooling to a fixed output size (PyTorch's window boundaries)."""
    return _adaptive_max(2, input, output_size, return_indices)


@overload
def adaptive_max_pool3d(input: Tensor, output_size: IntOrInts,
                        return_indices: Literal[False] = ...) -> Tensor: ...
@overload
def adaptive_max_pool3d(input: Tensor, output_size: IntOrInts,
                        return_indices: Literal[True]) -> tuple[Tensor, Tensor]: ...
@autocast_op("adaptive_max_pool3d")
def adaptive_max_pool3d(input: Tensor, output_size: IntOrInts,
                        return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """3-d max pooling to a fixed output size (PyTorch's window boundaries)."""
    return _adaptive_max(3, input, output_size, return_indices)


def _lp_pool(pool, max_pool, n, input, norm_type, kernel_size, stride, ceil_mode):
    """PyTorch's composite: ``(sum over the window of x**p) ** (1/p)`` as the average pool of
    ``x**p`` times the window size, ``max_pool`` of ``|x|`` for ``p = +-inf``."""
    if norm_type == float("inf"):
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode) if stride is not None \
        else pool(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    size = kernel_size
    if not isinstance(size, int):
        size = 1
        for k in kernel_size:
            size *= k
    elif n > 1:
        size = kernel_size ** n
    return (_pw.sign(out) * relu(_pw.abs(out))).mul(size).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: IntOrInts,
              stride: IntOrInts | None = None, ceil_mode: bool = False) -> Tensor:
    """Power-average pooling over 1-D windows: ``(sum x**p) ** (1/p)``."""
    return _lp_pool(avg_pool1d, max_pool1d, 1, input, norm_type, kernel_size, stride,
                    ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: IntOrInts,
              stride: IntOrInts | None = None, ceil_mode: bool = False) -> Tensor:
    """Power-average pooling over 2-D windows: ``(sum x**p) ** (1/p)``."""
    return _lp_pool(avg_pool2d, max_pool2d, 2, input, norm_type, kernel_size, stride,
                    ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: IntOrInts,
              stride: IntOrInts | None = None, ceil_mode: bool = False) -> Tensor:
    """Power-average pooling over 3-D windows: ``(sum x**p) ** (1/p)``."""
    return _lp_pool(avg_pool3d, max_pool3d, 3, input, norm_type, kernel_size, stride,
                    ceil_mode)


def _unpool_size(input, kernel_size, stride, padding, output_size):
    """PyTorch's output size of max unpooling: ``(in - 1) * stride + kernel - 2 * padding``,
    or ``output_size`` (its spatial dims) within a stride of that."""
    n = len(kernel_size)
    default = [(input.shape[-n + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
               for d in range(n)]
    if output_size is None:
        size = default
    else:
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        if len(output_size) != n:
            raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} "
                             f"elements, but it has a length of '{len(output_size)}'")
        for d in range(n):
            low, high = default[d] - stride[d], default[d] + stride[d]
            if not low < output_size[d] < high:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be '
                                 f"between {low} and {high})")
        size = output_size
    for d in range(n):
        if size[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{d}]={size[d]}")
    return size


@batching.per_sample  # (it reads the indices: per sample, each sample's own)
def _unpool(n, input, indices, kernel_size, stride, padding, output_size):
    tup = lambda v: (v,) * n if isinstance(v, int) else tuple(v)  # noqa: E731
    kernel_size = tup(kernel_size)
    stride = kernel_size if stride is None else tup(stride)
    size = _unpool_size(input, kernel_size, stride, tup(padding), output_size)
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    idx = indices._data.astype(np.int64)
    plane = int(np.prod(size))
    _recording.expect(_check_unpool_indices, idx, plane, tuple(size))
    op = _pooling._max_unpool3d if n == 3 else _pooling._max_unpool2d
    return saves_also(op(input, idx, tuple(size)), indices)


def _check_unpool_indices(idx, plane, size):
    if idx.size and (idx.min() < 0 or idx.max() >= plane):
        bad = int(idx[(idx < 0) | (idx >= plane)].reshape(-1)[0])
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, size))}")


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: IntOrInts,
                 stride: IntOrInts | None = None, padding: IntOrInts = 0,
                 output_size: Sequence[int] | None = None) -> Tensor:
    """The partial inverse of ``max_pool1d``: each value back at its index, zeros elsewhere."""
    tup = lambda v: (v,) if isinstance(v, int) else tuple(v)  # noqa: E731
    kernel_size = tup(kernel_size)
    stride = kernel_size if stride is None else tup(stride)
    size = _unpool_size(input, kernel_size, stride, tup(padding), output_size)
    return _unpool(2, input.unsqueeze(-1), indices.unsqueeze(-1), kernel_size + (1,),
                   stride + (1,), (0, 0), list(size) + [1]).squeeze(-1)


@autocast_op("max_unpool2d")
def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: IntOrInts,
                 stride: IntOrInts | None = None, padding: IntOrInts = 0,
                 output_size: Sequence[int] | None = None) -> Tensor:
    """The partial inverse of ``max_pool2d``: each value back at its index, zeros elsewhere."""
    return _unpool(2, input, indices, kernel_size, stride, padding, output_size)


@autocast_op("max_unpool3d")
def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: IntOrInts,
                 stride: IntOrInts | None = None, padding: IntOrInts = 0,
                 output_size: Sequence[int] | None = None) -> Tensor:
    """The partial inverse of ``max_pool3d``: each value back at its index, zeros elsewhere."""
    return _unpool(3, input, indices, kernel_size, stride, padding, output_size)
