"""Shape ops: views (sharing storage and version counter), joins, splits and reorderings.

A view op returns a NumPy view of its input and is wrapped with ``as_view``, so in-place writes
through it reach the base (which then gets a ``CopySlices`` node). Ops that PyTorch computes as
copies (``flip``, ``roll``, ``repeat``...) copy here too.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

from .. import _broadcast, _dtypes, _errors, _memory_format, _xp
from .._creation import tril_indices, triu_indices
from .._tensor import Size, Tensor, _wrap_dim
from ..autograd import forward_ad
from ..autograd.views import as_view
from .autocast import autocast_op
from .registry import defop

# Messages PyTorch gives once per process (``TORCH_WARN_ONCE``).
T_DEPRECATED = (
    "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
    "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
    "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a "
    "tensor.")
ZERO_DIM_DEPRECATED = "Tensor.{name} is deprecated on 0-D tensors. {hint}"
_warned = set()


def _warn_once(message, stacklevel):
    """Warn the first time only; ``stacklevel`` counts from the caller of ``_warn_once``."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)


def infer_size(shape, numel):
    """Resolve one ``-1`` in ``shape``; PyTorch's errors for impossible shapes."""
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(_errors.VIEW_SIZE.format(shape=shape, numel=numel))
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(_errors.VIEW_SIZE.format(shape=shape, numel=numel))
    return tuple(shape)


def _shape_args(shape, keyword=None, name=None, label=None):
    """``f(2, 3)`` and ``f((2, 3))`` alike: the sizes as a tuple; or ``f(label=keyword)``,
    PyTorch's keyword for them."""
    if keyword is not None:
        if shape:
            raise TypeError(f"{name}() got multiple values for argument '{label}'")
        return _int_list(keyword)
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


def _int_list(dims):
    return (dims,) if isinstance(dims, int) else tuple(dims)


def _unique_dims(dims, ndim):
    """Wrapped dims, with PyTorch's error for a dim named twice."""
    wrapped = tuple(_wrap_dim(d, ndim) for d in dims)
    for i, d in enumerate(wrapped):
        if d in wrapped[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return wrapped


def _new_zeros(like, shape):
    """Zeros of ``shape`` with ``like``'s dtype and device (``Tensor.new_zeros``); inside vmap,
    per sample of ``like`` (a rule writes a batched gradient into them)."""
    from .._creation import zeros
    levels = getattr(like, "_levels", None)
    if levels:
        from . import batching
        batch = tuple(like._data.shape[:len(levels)])
        return batching.wrap(zeros(batch + tuple(shape), dtype=like.dtype, device=like.device),
                             levels)
    return zeros(tuple(shape), dtype=like.dtype, device=like.device)


# Rules call ``xp.new_zeros(g, shape)``: unlike ``xp.zeros``, it stays on ``g``'s device when
# the rule runs on Tensors (under ``create_graph``).
_xp.register_extra("new_zeros", lambda xp, like, shape: xp.zeros(shape, dtype=like.dtype),
                   _new_zeros)


def _embed(xp, g, shape, key):
    """Zeros of ``shape`` with ``g`` written at ``key``: the derivative of reading ``a[key]``.
    (Recorded, under ``create_graph``, as one op rather than a write into a view.)"""
    if isinstance(g, Tensor):
        return xp.index_add_zeros(g, shape, key)
    out = xp.new_zeros(g, shape)
    out[key] = g
    return out


# --------------------------------------------------------------------------- view, reshape


@defop("view", n_in=1, jvp="linear")
def _view(xp, input, shape, in_shape):
    return xp.reshape(input, shape)


_view.defvjp(lambda xp, g, ans, input, shape, in_shape: xp.reshape(g, in_shape))


@defop("unsafe_view", n_in=1, overload=0, jvp="linear")
def _unsafe_view(xp, input, shape, in_shape):
    return xp.reshape(input, shape)


_unsafe_view.defvjp(lambda xp, g, ans, input, shape, in_shape: xp.reshape(g, in_shape))


@defop("clone", jvp="linear")
def _clone(xp, input):
    return input.copy()


_clone.defvjp(lambda xp, g, ans, input: g)


def _viewable(input, shape):
    """Whether ``input`` can be reshaped to ``shape`` without copying."""
    arr = input._data
    if arr.flags.c_contiguous or arr.size <= 1:
        return True
    lead = arr.shape[:arr.ndim - input.ndim]  # vmap's batch dims (see ops/batching.py)
    try:
        v = arr.view()
        v.shape = lead + tuple(shape)
        return True
    except AttributeError:
        return False


# ``reshape`` of a tensor whose elements are not in row-major order, when a view serves:
# the same op as ``view`` under PyTorch's name for it.
_reshape_alias = defop("_reshape_alias", n_in=1, jvp="linear")(_view.forward).defvjp(
    lambda xp, g, ans, input, shape, in_shape: xp.reshape(g, in_shape))


def _reshaped_view(input, shape, op=_view):
    out = op(input, shape, input.shape)
    return as_view(out, input, lambda xp, a: xp.reshape(a, shape))


def view(input, *shape, size=None):
    """A view with a new shape (one dim may be -1); the storage must allow it."""
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int)):
        from .dtype_view import view_dtype  # (a reinterpretation of the bytes)
        return view_dtype(input, shape[0])
    shape = infer_size(_shape_args(shape, size, "view", "size"), input.numel())
    if not _viewable(input, shape):
        raise RuntimeError(_errors.VIEW_STRIDE)
    return _reshaped_view(input, shape)


def reshape(input, *args, shape=None):
    """``view`` when the storage allows it, otherwise a copy."""
    shape = infer_size(_shape_args(args, shape, "reshape", "shape"), input.numel())
    if _viewable(input, shape):
        contiguous = input._data.flags.c_contiguous or getattr(input, "_levels", None)
        return _reshaped_view(input, shape, _view if contiguous else _reshape_alias)
    return _unsafe_view(_clone(input), shape, input.shape)


def view_as(input, other):
    return view(input, other.shape)


def reshape_as(input, other):
    return reshape(input, other.shape)


def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim..end_dim`` into one (a view when the storage allows it)."""
    start, end = _wrap_dim(start_dim, input.ndim), _wrap_dim(end_dim, input.ndim)
    if input.ndim == 0:
        return reshape(input, (1,))
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    shape = input.shape
    return reshape(input, shape[:start] + (math.prod(shape[start:end + 1]),) + shape[end + 1:])


def ravel(input):
    """The entries as a vector (PyTorch views a contiguous copy when it must copy)."""
    return reshape(contiguous(input), (-1,))


def unflatten(input, dim, sizes):
    """Split dim ``dim`` into ``sizes`` (one may be -1); always a view."""
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = _wrap_dim(dim, input.ndim)
    sizes = tuple(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    size = input.shape[d]
    known = math.prod(s for s in sizes if s != -1)
    if (-1 not in sizes and known != size) or (-1 in sizes and (known == 0 or size % known)):
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {d} ({size}) in the input tensor")
    sizes = infer_size(sizes, size)
    return view(input, input.shape[:d] + sizes + input.shape[d + 1:])


def clone(input, *, memory_format=None):
    """A copy that stays in the graph (``CloneBackward0``), laid out as ``memory_format``
    asks; the default ``preserve_format`` keeps ``input``'s stride order."""
    fmt = _memory_format.check(memory_format, "clone")
    if getattr(input, "_levels", None) and fmt not in (_memory_format.preserve_format,
                                                       _memory_format.contiguous_format):
        raise RuntimeError("NYI: Tensor.clone(memory_format) inside vmap is only supported with "
                           "memory_format torch.preserve_format or torch.contiguous_format (got "
                           f"{_memory_format.CPP_NAMES[fmt]})")
    if input._data.flags.c_contiguous and fmt in (_memory_format.preserve_format,
                                                  _memory_format.contiguous_format):
        return _clone(input)
    return _clone_as(input, fmt)


@defop("clone", n_in=1, jvp="linear")
def _clone_as(xp, input, fmt):
    return _memory_format.relayout(input, fmt)


_clone_as.defvjp(lambda xp, g, ans, input, fmt: g)


def contiguous(input, *args, memory_format=None):
    """``input`` itself when it is laid out as ``memory_format`` (default
    ``contiguous_format``) asks, otherwise such a copy."""
    if args:
        raise TypeError(f"contiguous() takes 0 positional arguments but {len(args)} was given")
    fmt = _memory_format.check(memory_format, "contiguous", _memory_format.contiguous_format)
    if fmt is _memory_format.preserve_format:
        fmt = _memory_format.contiguous_format
    _memory_format.check_rank(input.ndim, fmt)
    return input if input.is_contiguous(memory_format=fmt) else _clone_as(input, fmt)


# --------------------------------------------------------------------------- (un)squeeze


@defop("unsqueeze", n_in=1, jvp="linear")
def _unsqueeze(xp, input, dim):
    return xp.expand_dims(input, dim)


_unsqueeze.defvjp(lambda xp, g, ans, input, dim: xp.squeeze(g, axis=dim))


def unsqueeze(input, dim):
    dim = _wrap_dim(dim, input.ndim + 1)
    return as_view(_unsqueeze(input, dim), input, lambda xp, a: xp.expand_dims(a, dim))


def _squeezed_shape(shape, dims):
    dims = _int_list(dims)
    return tuple(n for i, n in enumerate(shape) if n != 1 or i not in dims)


def _squeeze_forward(xp, input, dims, in_shape):
    return xp.reshape(input, _squeezed_shape(in_shape, dims))


def _squeeze_rule(xp, g, ans, input, dims, in_shape):
    return xp.reshape(g, in_shape)


@defop("squeeze", n_in=1, jvp="linear")
def _squeeze_all(xp, input, in_shape):
    return xp.reshape(input, tuple(s for s in in_shape if s != 1))


_squeeze_all.defvjp(lambda xp, g, ans, input, in_shape: xp.reshape(g, in_shape))
# One forward, named as PyTorch names the overloads: squeeze(dim), squeeze(dims), and the
# squeeze ``matmul`` applies to a vector-matrix product.
_squeeze_dim = defop("squeeze", n_in=1, overload=1, jvp="linear")(_squeeze_forward).defvjp(
    _squeeze_rule)
_squeeze_dims = defop("squeeze", n_in=1, overload=2, jvp="linear")(_squeeze_forward).defvjp(
    _squeeze_rule)
_squeeze_matmul = defop("squeeze", n_in=1, overload=4, jvp="linear")(_squeeze_forward).defvjp(
    _squeeze_rule)


def squeeze(input, dim=None):
    """Drop size-1 dims: all of them, one (``dim``), or those in a tuple of dims."""
    if dim is None:
        out = _squeeze_all(input, input.shape)
    elif isinstance(dim, (tuple, list)):
        out = _squeeze_dims(input, _unique_dims(dim, input.ndim), input.shape)
    else:
        out = _squeeze_dim(input, _wrap_dim(dim, input.ndim), input.shape)
    shape = out.shape
    return as_view(out, input, lambda xp, a: xp.reshape(a, shape))


@defop("alias", n_in=1, jvp="linear")
def _alias(xp, input):
    return input[...]


_alias.defvjp(lambda xp, g, ans, input: g)


# --------------------------------------------------------------------------- permutations


@defop("permute", n_in=1, jvp="linear")
def _permute(xp, input, dims):
    return xp.transpose(input, dims)


_permute.defvjp(lambda xp, g, ans, input, dims:
                xp.transpose(g, tuple(sorted(range(len(dims)), key=dims.__getitem__))))


def permute(input, *args, dims=None):
    """Reorder the dims (a view): output dim ``i`` is input dim ``dims[i]``."""
    if not args and dims is None:
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    dims = _shape_args(args, dims, "permute", "dims")
    if len(dims) != input.ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            "length of the desired ordering of dimensions i.e. input.dim() = "
            f"{input.ndim} is not equal to len(dims) = {len(dims)}")
    dims = tuple(_wrap_dim(d, input.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return as_view(_permute(input, dims), input, lambda xp, a: xp.transpose(a, dims))


@defop("t", n_in=1, jvp="linear")
def _t(xp, input):
    return input.T


_t.defvjp(lambda xp, g, ans, input: xp.swapaxes(g, 0, 1) if g.ndim == 2 else g)


def t(input):
    """Transpose of a tensor of at most 2 dims (a view)."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return as_view(_t(input), input, lambda xp, a: a.T)


def _swapaxes(xp, a, dim0, dim1):
    """``a`` with two dims swapped; a 0-d ``a`` (dims 0 and -1 name it) as it is, a view."""
    return xp.swapaxes(a, dim0, dim1) if a.ndim else a[...]


@defop("transpose", n_in=1, overload=0, jvp="linear")
def _transpose(xp, input, dim0, dim1):
    return _swapaxes(xp, input, dim0, dim1)


_transpose.defvjp(lambda xp, g, ans, input, dim0, dim1: _swapaxes(xp, g, dim0, dim1))


def transpose(input, dim0, dim1):
    """Swap two dims (a view)."""
    d0, d1 = _wrap_dim(dim0, input.ndim), _wrap_dim(dim1, input.ndim)
    return as_view(_transpose(input, d0, d1), input,
                   lambda xp, a: _swapaxes(xp, a, d0, d1))


swapdims = transpose


def swapaxes(input, axis0, axis1):
    """``transpose`` under NumPy's name (and argument names)."""
    return transpose(input, axis0, axis1)


@defop("conj", n_in=1, jvp="linear")
def _conj(xp, input):
    return xp.conj(input)


_conj.defvjp(lambda xp, g, ans, input: xp.conj(g))


def _numpy_T(input):
    """``x.T``: all dims reversed (PyTorch deprecates it for anything but matrices)."""
    if input.ndim != 2:
        _warn_once(T_DEPRECATED if input.ndim else ZERO_DIM_DEPRECATED.format(
            name="T", hint="This function is the identity in these cases."), 2)
    return permute(input, tuple(range(input.ndim - 1, -1, -1)))


def _matrix_transpose(input, name, conjugate):
    """``x.mT``, ``x.mH``, ``x.adjoint()``: the last two dims swapped (conjugated for mH)."""
    if input.ndim == 0 and name == "adjoint()":  # PyTorch conjugates here (but not for mH)
        _warn_once("adjoint() is deprecated on 0-D tensors. Consider using x.conj().", 3)
        return _conj(input) if input.is_complex() else input
    if input.ndim == 0:
        hint = ("This function is the identity in these cases." if name == "mT" else
                "Consider using x.conj().")
        _warn_once(ZERO_DIM_DEPRECATED.format(name=name, hint=hint), 3)
        return input
    if input.ndim < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. "
                           f"Got {input.ndim}-D tensor.")
    out = transpose(input, -2, -1)
    return _conj(out) if conjugate and input.is_complex() else out


def _mT(input):
    return _matrix_transpose(input, "mT", False)


def _mH(input):
    return _matrix_transpose(input, "mH", True)


def adjoint(input):
    """The conjugate transpose of the last two dims."""
    return _matrix_transpose(input, "adjoint()", True)


def _matrix_H(input):
    """``x.H``: the conjugate transpose of a matrix."""
    if input.ndim == 0:
        _warn_once(ZERO_DIM_DEPRECATED.format(name="H", hint="Consider using x.conj()."), 2)
        return _conj(input) if input.is_complex() else input
    if input.ndim != 2:
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {input.ndim}-D tensor."
            + (" For batches of matrices, consider using tensor.mH" if input.ndim > 2 else ""))
    return _matrix_transpose(input, "H", True)


def movedim(input, source, destination):
    """Move dims ``source`` to positions ``destination``; the others keep their order."""
    src, dst = _int_list(source), _int_list(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
            f"contain the same number of dims as destination ({list(dst)} dims)")
    n = input.ndim
    wsrc, wdst = [_wrap_dim(d, n) for d in src], [_wrap_dim(d, n) for d in dst]
    for name, given, wrapped in (("source", src, wsrc), ("destination", dst, wdst)):
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    if n == 0:  # PyTorch's alias of a 0-d tensor
        return as_view(_alias(input), input, lambda xp, a: a[...])
    order = [None] * n
    for s, d in zip(wsrc, wdst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in wsrc)
    return permute(input, tuple(o if o is not None else next(rest) for o in order))


moveaxis = movedim


# --------------------------------------------------------------------------- broadcasting


@defop("expand", n_in=1, jvp="linear")
def _expand(xp, input, shape):
    return xp.broadcast_to(input, shape)


_expand.defvjp(lambda xp, g, ans, input, shape: g)  # the engine sums g back to input's shape


def expand(input, *sizes, size=None):
    """A broadcast view with ``sizes`` (-1 keeps a dim); no memory is copied."""
    sizes = _shape_args(sizes, size, "expand", "size")
    if len(sizes) < input.ndim:
        raise RuntimeError(
            f"expand(torch.{input.dtype._legacy}{{{list(input.shape)}}}, size={list(sizes)}): "
            "the number of sizes provided "
            f"({len(sizes)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({input.ndim})")
    lead = len(sizes) - input.ndim
    shape = []
    for i, size in enumerate(sizes):
        if i < lead:
            if size < 0:
                raise RuntimeError(f"The expanded size of the tensor ({size}) isn't allowed in "
                                   f"a leading, non-existing dimension {i}")
        else:
            have = input.shape[i - lead]
            if size == -1:
                size = have
            elif have != 1 and size != have:
                raise RuntimeError(
                    f"The expanded size of the tensor ({size}) must match the existing size "
                    f"({have}) at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                    f"Tensor sizes: {list(input.shape)}")
        shape.append(size)
    shape = tuple(shape)
    return as_view(_expand(input, shape), input, lambda xp, a: xp.broadcast_to(a, shape))


def expand_as(input, other):
    return expand(input, other.shape)


def broadcast_to(input, size):
    return expand(input, size)


def broadcast_tensors(*tensors):
    """The tensors expanded to their common shape (those already of that shape as they are)."""
    shape = _broadcast.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(t if t.shape == shape else expand(t, shape) for t in tensors)


# --------------------------------------------------------------------------- repeating


@defop("repeat", n_in=1, jvp="linear")
def _repeat(xp, input, repeats, in_shape):
    return xp.tile(input, repeats)


def _repeat_rule(xp, g, ans, input, repeats, in_shape):
    """Each output dim is ``repeats[i]`` copies of the input dim: sum the copies."""
    padded = (1,) * (len(repeats) - len(in_shape)) + tuple(in_shape)
    g = xp.reshape(g, tuple(n for pair in zip(repeats, padded) for n in pair))
    return xp.sum(g, axis=tuple(range(0, 2 * len(repeats), 2)))


_repeat.defvjp(_repeat_rule)


def repeat(input, *sizes, repeats=None):
    """Tile the tensor ``sizes[i]`` times along each dim (new leading dims as needed)."""
    sizes = _shape_args(sizes, repeats, "repeat", "repeats")
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    padded = (1,) * (len(sizes) - input.ndim) + tuple(input.shape)
    shape = [r * n for r, n in zip(sizes, padded)]
    bad = next((n for n in shape if n < 0), None)
    if bad is not None:
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {shape}")
    return _repeat(input, sizes, input.shape)


def tile(input, *args, dims=None):
    """``repeat`` with missing leading repeats taken as 1."""
    dims = _shape_args(args, dims, "tile", "dims")
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element (or slice along ``dim``) ``repeats`` times, in place order.

    ``repeat_interleave(repeats)`` alone gives the index form: ``k`` repeated ``repeats[k]``
    times.
    """
    if repeats is None:
        if input.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        return _repeated_indices(input, input.numel())
    if dim is None:
        input, dim = flatten(input), 0
    if isinstance(repeats, Tensor):
        d = _wrap_dim(dim, input.ndim, scalar=False)
        return _repeat_interleave_tensor(input, repeats, d, dim)
    d = _wrap_dim(dim, input.ndim)
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    _wrap_dim(d + 1, input.ndim + 1)  # PyTorch unsqueezes the input at d + 1
    if input.ndim == 0:
        input = reshape(input, (1,))
    shape = input.shape
    spread = expand(unsqueeze(input, d + 1), shape[:d + 1] + (repeats,) + shape[d + 1:])
    return reshape(_clone(spread), shape[:d] + (shape[d] * repeats,) + shape[d + 1:])


def _repeat_interleave_tensor(input, repeats, d, dim):
    """``index_select`` of each index repeated (``d`` is ``dim`` wrapped)."""
    from . import indexing
    size = input.shape[d] if input.ndim else 1
    if repeats.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if repeats.numel() == 1:
        repeats = expand(reshape(repeats, (1,)), (size,))
    elif repeats.shape[0] != size:
        raise RuntimeError("repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {repeats.shape[0]} and input.size({dim}) = {size}")
    return indexing.index_select(input, d, _repeated_indices(repeats, size))


def _repeated_indices(repeats, size):
    """``k`` repeated ``repeats[k]`` times, as an int64 tensor."""
    reps = repeats._data
    if reps.dtype.kind not in "iu":
        raise NotImplementedError(
            f"\"repeat_interleave_cpu\" not implemented for '{repeats.dtype._legacy[:-6]}'")
    if reps.size and reps.min() < 0:
        raise RuntimeError("repeats can not be negative")
    xp = _xp.namespace_of(reps)
    return Tensor._make(xp.repeat(xp.arange(size), reps).astype("int64"), None, False)


# --------------------------------------------------------------------------- joining


def _legacy_empty(shape, ndim):
    """PyTorch lets a 1-d empty tensor join tensors of any rank; it contributes nothing."""
    return len(shape) == 1 and shape[0] == 0 and ndim != 1


@defop("cat", variadic=2, jvp="linear")
def _cat(xp, *args):
    *tensors, dim, shapes = args
    ndim = max(t.ndim for t in tensors)
    return xp.concatenate([t for t in tensors if not _legacy_empty(t.shape, ndim)], axis=dim)


def _cat_rule(xp, g, ans, i, inputs, dim, shapes):
    if _legacy_empty(shapes[i], g.ndim):
        return xp.new_zeros(g, shapes[i])
    start = sum(s[dim] for s in shapes[:i] if not _legacy_empty(s, g.ndim))
    return g[(slice(None),) * dim + (slice(start, start + shapes[i][dim]),)]


_cat.defvjp(_cat_rule)


def _common_dtype(tensors):
    dt = tensors[0].dtype
    for t in tensors[1:]:
        dt = _dtypes.promote_types(dt, t.dtype)
    return [to_dtype(t, dt) for t in tensors]


@autocast_op("cat")
def cat(tensors, dim=0):
    """Join tensors along an existing dim (all other dims must match)."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    # The tensor that sets the rank: the first that is not a legacy 1-d empty one (those
    # join tensors of any rank), or failing that the first of any rank.
    ref = next((t for t in tensors if t.ndim and tuple(t.shape) != (0,)),
               next((t for t in tensors if t.ndim), tensors[0]))
    if ref.ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    # (legacy empty tensors only: any dim joins them)
    d = 0 if all(tuple(t.shape) == (0,) for t in tensors) else _wrap_dim(dim, ref.ndim)
    for k, t in enumerate(tensors):
        if _legacy_empty(tuple(t.shape), ref.ndim):
            continue
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} "
                               f"and {t.ndim}")
        for j in range(ref.ndim):
            if j != d and t.shape[j] != ref.shape[j]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {ref.shape[j]} but got size {t.shape[j]} "
                                   f"for tensor number {k} in the list.")
    tensors = _common_dtype(tensors)
    return _cat(*tensors, d, tuple(tuple(t.shape) for t in tensors))


concat = concatenate = cat


@defop("stack", variadic=1, jvp="linear")
def _stack(xp, *args):
    *tensors, dim = args
    return xp.stack(tensors, axis=dim)


_stack.defvjp(lambda xp, g, ans, i, inputs, dim: g[(slice(None),) * dim + (i, Ellipsis)])


@autocast_op("stack")
def stack(tensors, dim=0):
    """Join same-shaped tensors along a new dim."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for k, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(tensors[0].shape)} at entry 0 and {list(t.shape)} "
                               f"at entry {k}")
    tensors = _common_dtype(tensors)
    return _stack(*tensors, _wrap_dim(dim, tensors[0].ndim + 1))


def _at_least(tensors, fn):
    """``atleast_Nd``: one tensor gives one tensor; several (or a list) give a tuple."""
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return fn(tensors[0])
    if len(tensors) == 1:
        tensors = tensors[0]
    return tuple(fn(t) for t in tensors)


def _atleast_1d(t):
    return reshape(t, (1,)) if t.ndim == 0 else t


def _atleast_2d(t):
    return reshape(t, (1, 1)) if t.ndim == 0 else unsqueeze(t, 0) if t.ndim == 1 else t


def _atleast_3d(t):
    if t.ndim == 0:
        return reshape(t, (1, 1, 1))
    if t.ndim == 1:
        return unsqueeze(unsqueeze(t, 0), -1)
    return unsqueeze(t, -1) if t.ndim == 2 else t


def atleast_1d(*tensors):
    return _at_least(tensors, _atleast_1d)


def atleast_2d(*tensors):
    return _at_least(tensors, _atleast_2d)


def atleast_3d(*tensors):
    return _at_least(tensors, _atleast_3d)


def _nonempty(tensors, name):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def hstack(tensors):
    """Join along dim 1 (dim 0 for vectors); scalars count as vectors."""
    tensors = [_atleast_1d(t) for t in _nonempty(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    """Stack rows: join along dim 0, vectors becoming ``1 x n`` rows."""
    return cat([_atleast_2d(t) for t in _nonempty(tensors, "vstack")], 0)


row_stack = vstack


def dstack(tensors):
    """Join along the third dim, lower-rank inputs raised to 3 dims."""
    return cat([_atleast_3d(t) for t in _nonempty(tensors, "dstack")], 2)


def column_stack(tensors):
    """Join columns: vectors (and scalars) become ``n x 1`` columns, then join along dim 1."""
    tensors = _nonempty(tensors, "column_stack")
    return cat([reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in tensors], 1)


# --------------------------------------------------------------------------- splitting


@defop("slice", n_in=1, jvp="linear")
def _slice(xp, input, key, shape):
    return input[key]


_slice.defvjp(lambda xp, g, ans, input, key, shape: _embed(xp, g, shape, key))


def slice_view(input, dim, start, stop, step=1):
    """``input[..., start:stop:step, ...]`` along ``dim`` (a view, ``SliceBackward0``)."""
    key = (slice(None),) * dim + (slice(start, stop, step), Ellipsis)
    return as_view(_slice(input, key, input.shape), input, lambda xp, a: a[key])


def _split_forward(xp, input, dim, bounds):
    return tuple(input[(slice(None),) * dim + (slice(a, b),)] for a, b in bounds)


def _split_rule(xp, g, ans, input, dim, bounds):
    return xp.concatenate(g, axis=dim)


_split = defop("split", n_in=1, nout=None, jvp="linear")(_split_forward).defvjp(_split_rule)
_split_with_sizes = defop("split_with_sizes", n_in=1, nout=None, jvp="linear")(
    _split_forward).defvjp(_split_rule)


def _split_views(op, input, dim, sizes):
    bounds, start = [], 0
    for n in sizes:
        bounds.append((start, start + n))
        start += n
    outs = op(input, dim, tuple(bounds))
    return tuple(as_view(o, input, lambda xp, a, k=(slice(None),) * dim + (slice(*b),): a[k],
                         multi_output=True)
                 for o, b in zip(outs, bounds))


def split(tensor, split_size_or_sections, dim=0):
    """Pieces of ``split_size`` along ``dim`` (the last may be smaller), or of the listed sizes.

    The pieces are views of ``tensor`` that may not be written in place while autograd
    records (as in PyTorch).
    """
    if not isinstance(split_size_or_sections, int):
        return split_with_sizes(tensor, split_size_or_sections, dim)
    size = split_size_or_sections
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, tensor.ndim)
    length = tensor.shape[d]
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
    if size == 0 and length:
        raise RuntimeError("split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {length}")
    count = max(-(-length // size), 1) if size else 1
    sizes = [size] * (count - 1) + [length - size * (count - 1)]
    return _split_views(_split, tensor, d, sizes)


def split_with_sizes(input, split_sizes, dim=0):
    """Pieces of the given sizes along ``dim`` (they must add up to its length); views."""
    sizes = list(split_sizes)
    if input.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, input.ndim)
    if any(s < 0 for s in sizes):
        raise RuntimeError("split_with_sizes expects split_sizes have only non-negative entries, "
                           f"but got split_sizes={sizes}")
    if sum(sizes) != input.shape[d]:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {input.shape[d]} (input "
            f"tensor's size at dimension {dim}), but got split_sizes={sizes}")
    return _split_views(_split_with_sizes, input, d, sizes)


def chunk(input, chunks, dim=0):
    """At most ``chunks`` equal pieces along ``dim`` (the last may be smaller); views."""
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _wrap_dim(dim, input.ndim)
    length = input.shape[d]
    if length == 0:
        return split_with_sizes(input, [0] * chunks, d)
    return split(input, -(-length // chunks), d)


def tensor_split(input, indices_or_sections, dim=0):
    """Split into ``sections`` near-equal pieces, or at the given indices; slice views."""
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    arg = indices_or_sections
    if isinstance(arg, Tensor):
        if arg.dtype != _dtypes.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {arg.dtype._legacy[:-6]}")
        if arg.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {arg.ndim} dims")
        arg = arg.item() if arg.ndim == 0 else arg.tolist()
    d = _wrap_dim(dim, input.ndim)
    if isinstance(arg, int):
        if arg <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {arg}")
        length = input.shape[d]
        small, extra = divmod(length, arg)
        stops = [k * small + min(k, extra) for k in range(1, arg)]
    else:
        stops = list(arg)
    starts = [0] + stops
    return tuple(slice_view(input, d, a, b) for a, b in zip(starts, stops + [None]))


@defop("unbind", n_in=1, nout=None, jvp="linear")
def _unbind(xp, input, dim):
    return tuple(input[(slice(None),) * dim + (k, Ellipsis)] for k in range(input.shape[dim]))


_unbind.defvjp(lambda xp, g, ans, input, dim: xp.stack(g, axis=dim))


def unbind(input, dim=0):
    """The slices along ``dim``, as a tuple of views."""
    d = _wrap_dim(dim, input.ndim)
    _wrap_dim(d, input.ndim, scalar=False)  # a 0-d tensor has no slices
    outs = _unbind(input, d)
    return tuple(as_view(o, input, lambda xp, a, k=k: a[(slice(None),) * d + (k, Ellipsis)],
                         multi_output=True)
                 for k, o in enumerate(outs))


def narrow(input, dim, start, length):
    """``length`` entries of dim ``dim`` from ``start`` on (a view)."""
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    start = int(start)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = _wrap_dim(dim, input.ndim)
    size = input.shape[d]
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(
            f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return slice_view(input, d, start, start + length)


# --------------------------------------------------------------------------- reordering copies


@defop("flip", n_in=1, jvp="linear")
def _flip(xp, input, dims):
    return xp.flip(input, axis=dims).copy()


_flip.defvjp(lambda xp, g, ans, input, dims: xp.flip(g, axis=dims))


def flip(input, *args, dims=None):
    """A copy with the order of entries reversed along each of ``dims``."""
    if dims is not None and args:
        raise TypeError("flip() got multiple values for argument 'dims'")
    if dims is None and not args:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    dims = _unique_dims(_shape_args(args) if dims is None else _int_list(dims), input.ndim)
    return _flip(input, dims if input.ndim else ())


def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return _flip(input, (1,))


def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return _flip(input, (0,))


@defop("roll", n_in=1, jvp="linear")
def _roll(xp, input, shifts, dims):
    return xp.roll(input, shifts, axis=dims)


_roll.defvjp(lambda xp, g, ans, input, shifts, dims: xp.roll(g, _negated(shifts), axis=dims))


def _negated(shifts):
    return -shifts if isinstance(shifts, int) else tuple(-s for s in shifts)


def roll(input, shifts, dims=None):
    """Shift entries cyclically by ``shifts`` along ``dims`` (over the flattened tensor if None)."""
    shifts = _int_list(shifts)
    dims = () if dims is None else _int_list(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if len(shifts) != len(dims) and not (not dims and len(shifts) == 1):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    if input.ndim == 0 and dims:
        _wrap_dim(dims[0], 0, scalar=False)
    if not dims:
        return _roll(input, shifts[0], None)  # over the flattened tensor
    return _roll(input, shifts, tuple(_wrap_dim(d, input.ndim) for d in dims))


@defop("rot90", n_in=1, jvp="linear")
def _rot90(xp, input, k, dims):
    return xp.rot90(input, k, axes=dims).copy()


_rot90.defvjp(lambda xp, g, ans, input, k, dims: xp.rot90(g, -k, axes=dims))


def rot90(input, k=1, dims=(0, 1)):
    """Rotate by ``k`` quarter turns in the plane of ``dims``, from the first towards the second."""
    dims = tuple(dims)
    n = input.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    wrapped = tuple(_wrap_dim(d, n) for d in dims)
    if wrapped[0] == wrapped[1]:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    return _rot90(input, k % 4, wrapped)


# --------------------------------------------------------------------------- windows, diff


def _windows(xp, input, dim, size, step):
    """The sliding windows of ``input`` along ``dim``, as a strided view: that dim counts the
    windows, a new last dim of ``size`` runs through each."""
    n = (input.shape[dim] - size) // step + 1
    st = input.strides
    shape = input.shape[:dim] + (n,) + input.shape[dim + 1:] + (size,)
    strides = st[:dim] + (st[dim] * step,) + st[dim + 1:] + (st[dim],)
    return xp.lib.stride_tricks.as_strided(input, shape, strides)


@defop("unfold", n_in=1, jvp="linear")
def _unfold(xp, input, dim, size, step):
    return _windows(xp, input, dim, size, step)


def _unfold_rule(xp, g, ans, input, dim, size, step):
    """Each window's gradient added back at the elements it covers."""
    n = g.shape[dim]
    total = None
    for k in range(size):
        key = (slice(None),) * dim + (slice(k, k + step * (n - 1) + 1, step),)
        part = _embed(xp, g[..., k], input.shape, key)
        total = part if total is None else total + part
    return total


_unfold.defvjp(_unfold_rule)


def unfold(input, dimension, size, step):
    """``Tensor.unfold``: the windows of ``size`` elements along ``dimension``, ``step``
    apart, as a view with a new last dim."""
    d = _wrap_dim(dimension, input.ndim)
    length = input.shape[d] if input.ndim else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if input.ndim == 0:
        return unsqueeze(input, 0)
    return as_view(_unfold(input, d, size, step), input,
                   lambda xp, a: _windows(xp, a, d, size, step))


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``prepend``/``append`` joined first)."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    parts = [t for t in (prepend, input, append) if t is not None]
    out = cat(parts, dim) if len(parts) > 1 else input
    d = _wrap_dim(dim, out.ndim)
    lead = (slice(None),) * d
    for _ in range(n):
        later, earlier = out[lead + (slice(1, None),)], out[lead + (slice(None, -1),)]
        out = later.logical_xor(earlier) if out.dtype is _dtypes.bool else later - earlier
    return out


def sum_to_size(input, *size):
    """``input`` summed down to ``size`` (which must expand to ``input``'s shape)."""
    size = _shape_args(size)
    shape = tuple(input.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != n for s, n in zip(size, shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size)
                                      if s == 1 and shape[lead + i] != 1)
    if not dims:
        return input
    out = input.sum(dims, keepdim=True)
    return reshape(out, size) if lead else out


# --------------------------------------------------------------------------- in-place reshapes
# ``x.unsqueeze_(0)`` gives x itself a new shape over the same storage. PyTorch numbers these
# nodes apart from the out-of-place ops' (``UnsqueezeBackward1``, ``SqueezeBackward3``...).
_unsqueeze_inplace = defop("unsqueeze", n_in=1, overload=1, jvp="linear")(
    _unsqueeze.forward).defvjp(*_unsqueeze.rules)
_squeeze_all_inplace = defop("squeeze", n_in=1, overload=3, jvp="linear")(
    _squeeze_all.forward).defvjp(*_squeeze_all.rules)
_squeeze_dim_inplace = defop("squeeze", n_in=1, overload=4, jvp="linear")(
    _squeeze_forward).defvjp(_squeeze_rule)
_squeeze_dims_inplace = defop("squeeze", n_in=1, overload=5, jvp="linear")(
    _squeeze_forward).defvjp(_squeeze_rule)
_t_inplace = defop("t", n_in=1, overload=1, jvp="linear")(_t.forward).defvjp(*_t.rules)
_transpose_inplace = defop("transpose", n_in=1, overload=1, jvp="linear")(
    _transpose.forward).defvjp(*_transpose.rules)


def _reshape_in_place(self, op, params, view):
    """Make ``self`` the result of the view op ``op(self, *params)``: same storage, new shape,
    the op's node as its history; ``view(xp, a)`` cuts the same view out of an array."""
    self._check_inplace()
    out = op(self, *params)
    self._data = out._data
    if self._base is not None:
        outer = self._view_fn
        self._view_fn = lambda xp, a: view(xp, outer(xp, a))
    if out._grad_fn is not None:
        self._grad_fn, self._output_nr, self._rg = out._grad_fn, 0, True
    if out._fw is not None:
        forward_ad.set_tangent(self, out._fw)  # the tangent, reshaped alike
    self._vc[0] += 1  # PyTorch counts a reshape in place as a write
    if self._base is not None:
        self._vv = self._vc[0]  # (its history is the one just set)
    return self


def unsqueeze_(self, dim):
    """In-place ``unsqueeze``: a size-1 dim inserted at ``dim``."""
    dim = _wrap_dim(dim, self.ndim + 1)
    return _reshape_in_place(self, _unsqueeze_inplace, (dim,),
                             lambda xp, a: xp.expand_dims(a, dim))


def squeeze_(self, dim=None):
    """In-place ``squeeze``: size-1 dims dropped (all, ``dim``, or a tuple of dims)."""
    if dim is None:
        op, params = _squeeze_all_inplace, (self.shape,)
    elif isinstance(dim, (tuple, list)):
        op, params = _squeeze_dims_inplace, (_unique_dims(dim, self.ndim), self.shape)
    else:
        op, params = _squeeze_dim_inplace, (_wrap_dim(dim, self.ndim), self.shape)
    shape = _squeezed_shape(self.shape, params[0]) if len(params) == 2 else \
        tuple(n for n in self.shape if n != 1)
    return _reshape_in_place(self, op, params, lambda xp, a: xp.reshape(a, shape))


def t_(self):
    """In-place ``t``: a matrix transposed."""
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return _reshape_in_place(self, _t_inplace, (), lambda xp, a: a.T)


def transpose_(self, dim0, dim1):
    """In-place ``transpose``: two dims swapped."""
    d0, d1 = _wrap_dim(dim0, self.ndim), _wrap_dim(dim1, self.ndim)
    return _reshape_in_place(self, _transpose_inplace, (d0, d1),
                             lambda xp, a: _swapaxes(xp, a, d0, d1))


swapdims_ = transpose_


def swapaxes_(self, axis0, axis1):
    return transpose_(self, axis0, axis1)

# --------------------------------------------------------------------------- select, complex


def select(input, dim, index):
    """The slice at ``index`` along ``dim`` (a view with one dim fewer): ``input[..., index]``."""
    from . import indexing
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.ndim)
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    return indexing.getitem(input, (slice(None),) * d + (index,))


def conj(input):
    """The complex conjugate; real tensors are returned as they are. ember computes it at
    once, but reports ``is_conj()`` as PyTorch's lazy conjugate would until resolved."""
    if not input.is_complex():
        return input
    out = _conj(input)
    out.__dict__["_lazy_conj"] = True
    return out


def resolve_conj(input):
    """A tensor with its conjugation materialised: a copy of a ``conj()`` result, else itself."""
    return _clone(input) if input.is_conj() else input


def resolve_neg(input):
    """Itself: ember has no lazily negated tensors."""
    return input


def _is_conj(input):
    return input.__dict__.get("_lazy_conj", False)


def _is_neg(input):
    return False


# ``x.real`` and ``x.imag`` of a complex tensor: views of its parts. PyTorch takes them as
# ``view_as_real(x)[..., 0]`` and ``[..., 1]``, hence the name of their nodes.
_real = defop("select", n_in=1, overload=0, jvp="linear")(lambda xp, input: input.real)
_real.defvjp(lambda xp, g, ans, input: g)
_imag = defop("select", n_in=1, overload=0, jvp="linear")(lambda xp, input: input.imag)
_imag.defvjp(lambda xp, g, ans, input: g * 1j)


def real(input):
    """The real part (a view) of a complex tensor; a real tensor itself."""
    if not input.is_complex():
        return input
    return as_view(_real(input), input, lambda xp, a: a.real)


def imag(input):
    """The imaginary part (a view) of a complex tensor."""
    if not input.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return as_view(_imag(input), input, lambda xp, a: a.imag)


# --------------------------------------------------------------------------- dtype


@defop("to_copy", n_in=1, jvp="linear")
def _to_copy(xp, input, dtype):
    if input.dtype.kind == "c" and dtype.kind != "c":
        input = input.real  # complex -> real keeps the real part
    return input.astype(dtype)


_to_copy.defvjp(lambda xp, g, ans, input, dtype: g)


def to_dtype(input, dtype, copy=False):
    """``input`` converted to ``dtype`` (itself when nothing changes and no copy is asked for)."""
    if input._data.dtype == dtype.np and not copy:
        return input
    if input._data.dtype.kind == "c" and not dtype.is_complex:
        warnings.warn("Casting complex values to real discards the imaginary part",
                      UserWarning, stacklevel=3)
    return _to_copy(input, dtype.np)


# --------------------------------------------------------------------------- grids and blocks
MESHGRID_INDEXING = (
    "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.")


def meshgrid(*tensors, indexing=None):
    """Coordinate grids: output ``i`` is input ``i`` viewed along dim ``i`` and expanded to
    the grid (``'xy'`` swaps the first two dims). PyTorch warns once when ``indexing`` is
    left out."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        _warn_once(MESHGRID_INDEXING, 2)
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for a, b in zip(tensors, tensors[1:]):
        if a.dtype != b.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if indexing not in ("xy", "ij"):
        raise RuntimeError('torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f"{indexing}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t}")
    axes = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) >= 2:
        axes[0], axes[1] = 1, 0
    shape = [0] * len(tensors)
    for t, axis in zip(tensors, axes):
        shape[axis] = t.numel()
    grids = []
    for t, axis in zip(tensors, axes):
        view_shape = [1] * len(tensors)
        view_shape[axis] = -1
        grids.append(expand(view(t, view_shape), shape))
    return tuple(grids)


def _check_vector(t):
    if t.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")


def cartesian_prod(*tensors):
    """The rows of all combinations of one element of each vector (``itertools.product``)."""
    for t in tensors:
        _check_vector(t)
    if len(tensors) == 1:
        return tensors[0]
    return stack([flatten(g) for g in meshgrid(*tensors, indexing="ij")], 1)


def combinations(input, r=2, with_replacement=False):
    """The rows of all length-``r`` combinations of the vector's elements
    (``itertools.combinations``, or ``combinations_with_replacement``)."""
    from .indexing import masked_select
    _check_vector(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return Tensor._make(_xp.namespace_of(input._data).empty((0,), dtype=input._data.dtype),
                            None, False)
    n = input.numel()
    raw = _xp.namespace_of(input._data)
    idx = raw.meshgrid(*([raw.arange(n)] * r), indexing="ij")
    keep = raw.ones((n,) * r, dtype=bool)
    for a, b in zip(idx, idx[1:]):  # PyTorch's triu mask: indices in order
        keep &= (a <= b) if with_replacement else (a < b)
    mask = Tensor._make(keep, None, False)
    return stack([masked_select(g, mask) for g in meshgrid(*([input] * r), indexing="ij")], 1)


@defop("block_diag", variadic=2, jvp="linear")
def _block_diag(xp, *args):
    *tensors, dtype, corners = args
    rows = corners[-1][0] if corners else 1
    cols = corners[-1][1] if corners else 0
    out = xp.zeros((rows, cols), dtype=dtype)
    for t, (r1, c1, r0, c0) in zip(tensors, _blocks(corners)):
        out[r0:r1, c0:c1] = xp.reshape(t, (r1 - r0, c1 - c0))
    return out


def _blocks(corners):
    """``(row end, col end, row start, col start)`` of each block."""
    return [(r1, c1) + (corners[i - 1] if i else (0, 0)) for i, (r1, c1) in enumerate(corners)]


def _block_diag_rule(xp, g, ans, i, inputs, dtype, corners):
    r1, c1, r0, c0 = _blocks(corners)[i]
    return xp.reshape(g[r0:r1, c0:c1], inputs[i].shape)


_block_diag.defvjp(_block_diag_rule)


def block_diag(*tensors):
    """The tensors (at most 2-d; a vector is a row) as blocks along the diagonal."""
    for k, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {k} has {t.ndim} dimensions")
    dtype = _dtypes.result_type(*tensors) if tensors else _dtypes.get_default_dtype()
    corners, r, c = [], 0, 0
    for t in tensors:
        shape = (1,) * (2 - t.ndim) + tuple(t.shape)
        r, c = r + shape[0], c + shape[1]
        corners.append((r, c))
    if any(getattr(t, "_levels", None) for t in tensors):
        return _block_diag_batched(tensors, dtype, corners)
    return _block_diag(*tensors, dtype.np, tuple(corners))


def _block_diag_batched(tensors, dtype, corners):
    """Inside ``vmap``: the blocks padded with zeros and joined, which ``cat`` batches."""
    from .._creation import zeros
    width = corners[-1][1]
    rows = []
    for t, (r1, c1, r0, c0) in zip(tensors, _blocks(corners)):
        block = reshape(to_dtype(t, dtype), (r1 - r0, c1 - c0))
        rows.append(cat([zeros(r1 - r0, c0, dtype=dtype), block,
                         zeros(r1 - r0, width - c1, dtype=dtype)], 1))
    return cat(rows, 0)


def broadcast_shapes(*shapes):
    """The ``torch.Size`` that tensors of ``shapes`` broadcast to (ints stand for 1-d shapes);
    PyTorch's errors, which name the offending argument."""
    shapes = tuple((x,) if isinstance(x, int) else x for x in shapes if x is not None)
    if not shapes:
        return Size([])
    for shape in shapes:
        if not isinstance(shape, Sequence):
            raise RuntimeError("Input shapes should be of type ints, a tuple of ints, or a list "
                               f"of ints, got {shape}")
    common = [1] * max(len(shape) for shape in shapes)
    for k, shape in enumerate(shapes):
        for i in range(-1, -1 - len(shape), -1):
            if shape[i] == common[i]:
                continue
            if common[i] == 1:
                if shape[i] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[i] = shape[i]
            if shape[i] != 1 and common[i] != shape[i]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[i]} at {i}! "
                    f"Mismatching argument at index {k} had {shape}; but expected shape "
                    f"should be broadcastable to {common}")
    for k, n in enumerate(common):
        if not isinstance(n, int):
            raise TypeError(f"torch.Size() takes an iterable of 'int' (item {k} is "
                            f"'{type(n).__name__}')")
    return Size(common)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a vector: columns ``x**0 .. x**(N-1)`` (decreasing powers
    unless ``increasing``); integers give int64. Built as PyTorch builds it (ones, a running
    product written into columns 1.., flipped), so the result's node is PyTorch's."""
    from .._creation import empty
    from .sorting import cumprod
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = _dtypes.promote_types(x.dtype, _dtypes.int64)
    result = empty(x.shape[0], n, dtype=dtype, device=x.device)
    if n > 0:
        result.fill_(1)
        if n > 1:
            # PyTorch copies x in and then the running product of that slice over it; ember
            # takes the product of x expanded (its cumprod saves its input, which the copy
            # would overwrite): the same values, gradients and output node
            result[:, 1:].copy_(cumprod(expand(unsqueeze(x, 1), (x.shape[0], n - 1)), 1))
    return result if increasing else flip(result, (1,))


# --------------------------------------------------------------------------- the family's surface
__all__ = ["view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "ravel", "clone",
           "contiguous", "unsqueeze", "squeeze", "permute", "t", "transpose", "swapaxes",
           "swapdims", "adjoint", "movedim", "moveaxis", "expand", "expand_as", "broadcast_to",
           "broadcast_tensors", "repeat", "tile", "repeat_interleave", "cat", "concat",
           "concatenate", "stack", "atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack",
           "row_stack", "dstack", "column_stack", "split", "split_with_sizes", "chunk",
           "tensor_split", "unbind", "narrow", "flip", "fliplr", "flipud", "roll", "rot90",
           "select", "conj", "resolve_conj", "resolve_neg", "real", "imag", "diff", "meshgrid",
           "cartesian_prod", "combinations", "block_diag", "broadcast_shapes", "tril_indices",
           "triu_indices", "vander"]
_FUNCTIONS_ONLY = ("cat", "concat", "concatenate", "stack", "atleast_1d", "atleast_2d",
                   "atleast_3d", "hstack", "vstack", "row_stack", "dstack", "column_stack",
                   "broadcast_tensors", "meshgrid", "cartesian_prod", "combinations",
                   "block_diag", "broadcast_shapes", "tril_indices", "triu_indices",
                   "vander")
METHODS = {name: globals()[name] for name in __all__ if name not in _FUNCTIONS_ONLY}
METHODS.update(
    T=property(_numpy_T),
    mT=property(_mT),
    mH=property(_mH),
    H=property(_matrix_H),
    real=property(real),
    imag=property(imag),
    is_conj=_is_conj,
    is_neg=_is_neg,
    unfold=unfold,
    sum_to_size=sum_to_size,
    unsqueeze_=unsqueeze_,
    squeeze_=squeeze_,
    t_=t_,
    transpose_=transpose_,
    swapaxes_=swapaxes_,
    swapdims_=swapdims_,
)
INPLACE = ()
ARRAY_API = {
    "reshape": lambda x, shape, copy=None: reshape(x, tuple(shape)),
    "broadcast_to": lambda x, shape: expand(x, tuple(shape)),
    "expand_dims": lambda x, axis: unsqueeze(x, axis),
    "squeeze": lambda x, axis: squeeze(x, axis),
    "swapaxes": lambda x, axis1, axis2: transpose(x, axis1, axis2),
    "transpose": lambda x, axes=None: permute(x, tuple(range(x.ndim - 1, -1, -1))
                                              if axes is None else tuple(axes)),
    # Rules' casts (a complex gradient reaching a real input) keep the real part silently.
    "astype": lambda x, dtype: x if x._data.dtype == np.dtype(getattr(dtype, "np", dtype))
    else _to_copy(x, np.dtype(getattr(dtype, "np", dtype))),
    "stack": lambda arrays, axis=0: stack(arrays, dim=axis),
    "concat": lambda arrays, axis=0: cat(arrays, dim=axis),
    "concatenate": lambda arrays, axis=0: cat(arrays, dim=axis),
    "flip": lambda x, axis=None: flip(x, tuple(range(x.ndim)) if axis is None else axis),
    "roll": lambda x, shift, axis=None: roll(x, shift, axis),
    "rot90": lambda x, k=1, axes=(0, 1): rot90(x, k, axes),
    "tile": lambda x, reps: tile(x, tuple(reps)),
    "conj": lambda x: _conj(x) if x.is_complex() else x,
}
