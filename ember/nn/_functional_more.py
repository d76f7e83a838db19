"""More of ``torch.nn.functional``: ``rms_norm``, ``embedding_bag`` (its op is in
``ember/ops/embedding_bag.py``), ``channel_shuffle`` (``ember/ops/channel_shuffle.py``), the
power-average pools ``lp_pool1d/2d/3d`` and ``local_response_norm``.

``rms_norm``, ``lp_pool*`` and ``local_response_norm`` are composites of ordinary ops, as in
PyTorch, so their ``grad_fn`` chains are PyTorch's (``rms_norm``: ``MulBackward0 <-
RsqrtBackward0 <- AddBackward1 <- MeanBackward1 <- PowBackward0``, computed in float32 for
half-precision inputs).
"""
from __future__ import annotations

import numpy as np

from .. import _creation, _dtypes
from ..ops import channel_shuffle as _cs
from ..ops import embedding_bag as _bag
from ..ops import pointwise as _pw
from ..ops import unary as _unary
from ..ops.autocast import autocast_op
from ..ops.registry import saves_also
from . import functional as F
from .functional import _embedding_renorm, _word

__all__ = ["rms_norm"]

# torch.finfo(dtype).eps: the gap between 1 and the next number (of the real part's type)
_EPS = {_dtypes.float32: 2.0 ** -23, _dtypes.float64: 2.0 ** -52, _dtypes.complex64: 2.0 ** -23,
        _dtypes.complex128: 2.0 ** -52}


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``input / sqrt(mean(input**2) + eps) * weight``, the mean over the trailing
    ``normalized_shape`` dims; ``eps`` defaults to the machine epsilon of the dtype it
    computes in (float32 for half-precision inputs)."""
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError("rms_norm(): argument 'normalized_shape' (position 2) must be tuple "
                        f"of ints, not {type(normalized_shape).__name__}")
    shape = tuple(normalized_shape)
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = "
                           f"{list(shape)}")
    n = len(shape)
    if input.ndim < n or tuple(input.shape[input.ndim - n:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*{', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    if not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError(f'"rms_norm" not implemented for \'{_word(input.dtype)}\'')
    low = input.dtype in (_dtypes.float16, _dtypes.bfloat16)
    x = input.to(_dtypes.float32) if low else input
    if eps is None:
        eps = _EPS[x.dtype]  # of the dtype it computes in: float32's for half inputs
    dims = tuple(range(input.ndim - n, input.ndim))
    out = x * _unary.rsqrt(_pw.add_scalar(x.pow(2).mean(dims, keepdim=True), eps))
    if low:
        out = out.to(input.dtype)
    return out if weight is None else out * weight


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """The ``sum``, ``mean`` or ``max`` of each bag of embedding rows: bags are the rows of a
    2-D ``input``, or the runs of a 1-D ``input`` starting at ``offsets``.
    ``per_sample_weights`` (mode ``sum``) scales each row; ``padding_idx`` entries are left
    out of their bag (and of its count); an empty bag gives zeros.

    ``scale_grad_by_freq`` scales each index's gradient by 1 / (its count in ``input``), as
    PyTorch documents; PyTorch 2.13's CPU kernel scales by other counts (for ``[1, 2, 4, 5, 4,
    3, 2, 9, 0, 0]`` it gives row 1 half and row 2 double the sum's gradient), which ember does
    not copy."""
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            kind = "<class 'torch.Tensor'>" if hasattr(offsets, "_data") else type(offsets)
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {kind}")
        offsets = _creation.arange(0, input.numel(), input.size(1), dtype=input.dtype)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if sparse:
        if mode == "max":
            raise ValueError("max mode does not support sparse weights")
        raise NotImplementedError("ember: embedding_bag with sparse=True (sparse gradients)")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    if str(input.dtype) not in ("torch.int64", "torch.int32"):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"torch.{input.dtype._legacy} instead (while checking arguments for "
                           "embedding_bag)")
    n_rows = weight.shape[0]
    if padding_idx is not None:
        if not -n_rows <= padding_idx < n_rows:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, "
                               f"-{n_rows} through {n_rows - 1}, but got {padding_idx}")
        padding_idx %= n_rows
    indices = input._data.astype(np.int64)  # private copies: the node keeps them
    starts = offsets._data.astype(np.int64)
    n = indices.size
    if starts.size and starts[0] != 0:
        word = "Long" if offsets._data.dtype == np.int64 else "Int"
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {int(starts[0])}\n"
                           f"[ torch.{word}Tensor{{}} ]")
    if starts.size and starts[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {int(starts[-1])}")
    if include_last_offset:  # (PyTorch's CPU kernel lets a short last offset through and
        # returns means over the wrong counts; its message for a bad last offset is raised here)
        if starts.size == 0 or starts[-1] != n:
            raise RuntimeError("Your input appears to be incorrect: the last offset value "
                               "should be the size of the indices tensor, but it seems not to "
                               "be the case.")
        starts = starts[:-1]
    if n and (indices.min() < 0 or indices.max() >= n_rows):
        raise RuntimeError("Expected i < index_size to be true, but got false.  (Could this "
                           "error message be improved?  If so, please report an enhancement "
                           "request to PyTorch.)")
    if max_norm is not None:
        _embedding_renorm(weight, indices, max_norm, norm_type)
    nbags = starts.size
    bag_of = np.searchsorted(starts, np.arange(n), side="right") - 1
    keep = np.ones(n, bool) if padding_idx is None else indices != padding_idx
    counts = np.bincount(bag_of[keep], minlength=nbags)
    dtype = weight._data.dtype
    coef = keep.astype(dtype).reshape(-1, 1)
    divisor = np.ones((nbags, 1), dtype)
    if mode == "mean":
        divisor = np.maximum(counts, 1).astype(dtype).reshape(-1, 1)
    elif mode == "max":  # each bag's first maximal entry, per column
        rows = weight._data[indices]
        best = np.full((nbags, rows.shape[1]), -np.inf, dtype)
        np.maximum.at(best, bag_of[keep], rows[keep])
        hit = keep[:, None] & (rows == best[bag_of])
        first = np.full(best.shape, n, np.int64)
        np.minimum.at(first, bag_of, np.where(hit, np.arange(n)[:, None], n))
        coef = (np.arange(n)[:, None] == first[bag_of]).astype(dtype)
    if per_sample_weights is None:  # (PyTorch's node has the slot all the same: None)
        per_sample_weights = _creation.ones(n, dtype=weight.dtype)
    out = _bag._embedding_bag(weight, per_sample_weights, indices, bag_of, nbags, coef,
                              divisor, bool(scale_grad_by_freq))
    return saves_also(out, input, offsets)


__all__ += ["embedding_bag"]


def channel_shuffle(input, groups):
    """Interleave the channels of ``groups`` groups (ShuffleNet): ``(N, g*k, ...)`` viewed as
    ``(N, g, k, ...)``, the two group dims swapped."""
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    return _cs._channel_shuffle(input, groups)


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
    return (_pw.sign(out) * F.relu(_pw.abs(out))).mul(size).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over 1-D windows: ``(sum x**p) ** (1/p)``."""
    return _lp_pool(F.avg_pool1d, F.max_pool1d, 1, input, norm_type, kernel_size, stride,
                    ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over 2-D windows: ``(sum x**p) ** (1/p)``."""
    return _lp_pool(F.avg_pool2d, F.max_pool2d, 2, input, norm_type, kernel_size, stride,
                    ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over 3-D windows: ``(sum x**p) ** (1/p)``."""
    return _lp_pool(F.avg_pool3d, F.max_pool3d, 3, input, norm_type, kernel_size, stride,
                    ceil_mode)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """AlexNet's local response normalization across channels: ``x / (k + alpha *
    mean(x**2 over `size` neighbouring channels)) ** beta`` (PyTorch's composite of ``pad``
    and an average pool)."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = F.pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = F.avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = F.pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = F.avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).view(sizes)
    return input / div.mul(alpha).add(k).pow(beta)


__all__ += ["channel_shuffle", "lp_pool1d", "lp_pool2d", "lp_pool3d", "local_response_norm"]


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


def _unpool(n, input, indices, kernel_size, stride, padding, output_size):
    from ..ops import unpool as _unpool_ops
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
    if idx.size and (idx.min() < 0 or idx.max() >= plane):
        bad = int(idx[(idx < 0) | (idx >= plane)].reshape(-1)[0])
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, size))}")
    op = _unpool_ops._max_unpool3d if n == 3 else _unpool_ops._max_unpool2d
    return saves_also(op(input, idx, tuple(size)), indices)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool1d``: each value back at its index, zeros elsewhere."""
    tup = lambda v: (v,) if isinstance(v, int) else tuple(v)  # noqa: E731
    kernel_size = tup(kernel_size)
    stride = kernel_size if stride is None else tup(stride)
    size = _unpool_size(input, kernel_size, stride, tup(padding), output_size)
    return _unpool(2, input.unsqueeze(-1), indices.unsqueeze(-1), kernel_size + (1,),
                   stride + (1,), (0, 0), list(size) + [1]).squeeze(-1)


@autocast_op("max_unpool2d")
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool2d``: each value back at its index, zeros elsewhere."""
    return _unpool(2, input, indices, kernel_size, stride, padding, output_size)


@autocast_op("max_unpool3d")
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool3d``: each value back at its index, zeros elsewhere."""
    return _unpool(3, input, indices, kernel_size, stride, padding, output_size)


__all__ += ["max_unpool1d", "max_unpool2d", "max_unpool3d"]
