"""Shape ops: views (sharing storage and version counter) and copies, with derivatives."""
from __future__ import annotations

from .. import _dtypes, _errors
from .._tensor import _wrap_dim
from ..autograd.views import as_view
from .registry import defop


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


def _shape_args(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


@defop("view", n_in=1)
def _view(xp, input, shape, in_shape):
    return xp.reshape(input, shape)


_view.defvjp(lambda xp, g, ans, input, shape, in_shape: xp.reshape(g, in_shape))


@defop("unsafe_view", n_in=1, overload=0)
def _unsafe_view(xp, input, shape, in_shape):
    return xp.reshape(input, shape)


_unsafe_view.defvjp(lambda xp, g, ans, input, shape, in_shape: xp.reshape(g, in_shape))


@defop("clone")
def _clone(xp, input):
    return input.copy()


_clone.defvjp(lambda xp, g, ans, input: g)


def _viewable(arr, shape):
    """Whether ``arr`` can be reshaped to ``shape`` without copying."""
    if arr.flags.c_contiguous or arr.size <= 1:
        return True
    try:
        v = arr.view()
        v.shape = shape
        return True
    except AttributeError:
        return False


def _reshape_view(xp, a, shape):
    return xp.reshape(a, shape)


def view(input, *shape):
    """A view with a new shape (one dim may be -1); the storage must allow it."""
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int)):
        return input.to(shape[0])  # view(dtype) is not supported beyond same-size casts
    shape = infer_size(_shape_args(shape), input.numel())
    if not _viewable(input._data, shape):
        raise RuntimeError(_errors.VIEW_STRIDE)
    out = _view(input, shape, input.shape)
    return as_view(out, input, lambda xp, a, s=shape: xp.reshape(a, s))


def reshape(input, *shape):
    """``view`` when the storage allows it, otherwise a copy."""
    shape = infer_size(_shape_args(shape), input.numel())
    if _viewable(input._data, shape):
        out = _view(input, shape, input.shape)
        return as_view(out, input, lambda xp, a, s=shape: xp.reshape(a, s))
    return _unsafe_view(_clone(input), shape, input.shape)


def view_as(input, other):
    return view(input, other.shape)


def reshape_as(input, other):
    return reshape(input, other.shape)


def clone(input, *, memory_format=None):
    """A copy that stays in the graph (``CloneBackward0``)."""
    return _clone(input)


def contiguous(input, memory_format=None):
    return input if input._data.flags.c_contiguous else _clone(input)


# --------------------------------------------------------------------------- (un)squeeze, t


@defop("unsqueeze", n_in=1)
def _unsqueeze(xp, input, dim):
    return xp.expand_dims(input, dim)


_unsqueeze.defvjp(lambda xp, g, ans, input, dim: xp.squeeze(g, axis=dim))


def unsqueeze(input, dim):
    dim = _wrap_dim(dim, input.ndim + 1)
    return as_view(_unsqueeze(input, dim), input, lambda xp, a, d=dim: xp.expand_dims(a, d))


@defop("squeeze", n_in=1, overload=1)
def _squeeze_dim(xp, input, dim, in_shape):
    return xp.reshape(input, in_shape[:dim] + in_shape[dim + 1:])


_squeeze_dim.defvjp(lambda xp, g, ans, input, dim, in_shape: xp.reshape(g, in_shape))

# ``matmul`` of a vector and a matrix squeezes in place, which PyTorch names SqueezeBackward4.
_squeeze_matmul = defop("squeeze", n_in=1, overload=4)(_squeeze_dim.forward)
_squeeze_matmul.defvjp(*_squeeze_dim.rules)


@defop("squeeze", n_in=1)
def _squeeze_all(xp, input, in_shape):
    return xp.reshape(input, tuple(s for s in in_shape if s != 1))


_squeeze_all.defvjp(lambda xp, g, ans, input, in_shape: xp.reshape(g, in_shape))


def squeeze(input, dim=None):
    shape = input.shape
    if dim is None:
        out = _squeeze_all(input, shape)
        new = out.shape
    else:
        d = _wrap_dim(dim, input.ndim)
        if input.ndim == 0 or shape[d] != 1:
            return as_view(_alias(input), input, lambda xp, a: a)
        out = _squeeze_dim(input, d, shape)
        new = out.shape
    return as_view(out, input, lambda xp, a, s=tuple(new): xp.reshape(a, s))


@defop("alias", n_in=1)
def _alias(xp, input):
    return input[...]


_alias.defvjp(lambda xp, g, ans, input: g)


@defop("t", n_in=1)
def _t(xp, input):
    return input.T


_t.defvjp(lambda xp, g, ans, input: g.T)


def t(input):
    """Transpose of a tensor of at most 2 dims (a view)."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return as_view(_t(input), input, lambda xp, a: a.T)


@defop("transpose", n_in=1, overload=0)
def _transpose(xp, input, dim0, dim1):
    return xp.swapaxes(input, dim0, dim1)


_transpose.defvjp(lambda xp, g, ans, input, dim0, dim1: xp.swapaxes(g, dim0, dim1))


def transpose(input, dim0, dim1):
    """Swap two dims (a view)."""
    d0, d1 = _wrap_dim(dim0, input.ndim), _wrap_dim(dim1, input.ndim)
    return as_view(_transpose(input, d0, d1), input,
                   lambda xp, a: xp.swapaxes(a, d0, d1))


swapaxes = swapdims = transpose


@defop("to_copy", n_in=1)
def _to_copy(xp, input, dtype):
    return input.astype(dtype)


_to_copy.defvjp(lambda xp, g, ans, input, dtype: g)


def to_dtype(input, dtype, copy=False):
    if input._data.dtype == dtype.np and not copy:
        return input
    return _to_copy(input, dtype.np)



@defop("expand", n_in=1)
def _expand(xp, input, shape):
    return xp.broadcast_to(input, shape)


_expand.defvjp(lambda xp, g, ans, input, shape: g)  # the engine sums g back to input's shape


def expand(input, *sizes):
    """A broadcast view with ``sizes`` (-1 keeps a dim); no memory is copied."""
    sizes = _shape_args(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError(
            f"expand(torch.{input.dtype._legacy}{{{list(input.shape)}}}, size={list(sizes)}): "
            "the number of sizes provided "
            f"({len(sizes)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({input.ndim})")
    lead = len(sizes) - input.ndim
    shape = tuple(input.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
    if shape == tuple(input.shape):
        return input
    return as_view(_expand(input, shape), input,
                   lambda xp, a, s=shape: xp.broadcast_to(a, s))


def expand_as(input, other):
    return expand(input, other.shape)


# --------------------------------------------------------------------------- joining, unbind


def _legacy_empty(shape, ndim):
    """PyTorch lets a 1-d empty tensor join tensors of any rank; it contributes nothing."""
    return len(shape) == 1 and shape[0] == 0 and ndim != 1


@defop("cat", variadic=2)
def _cat(xp, *args):
    *tensors, dim, shapes = args
    ndim = max(t.ndim for t in tensors)
    return xp.concatenate([t for t in tensors if not _legacy_empty(t.shape, ndim)], axis=dim)


def _cat_rule(xp, g, ans, i, inputs, dim, shapes):
    if _legacy_empty(shapes[i], g.ndim):
        return xp.zeros(shapes[i], dtype=g.dtype)
    start = sum(s[dim] for s in shapes[:i] if not _legacy_empty(s, g.ndim))
    return g[(slice(None),) * dim + (slice(start, start + shapes[i][dim]),)]


_cat.defvjp(_cat_rule)


def cat(tensors, dim=0, *, out=None):
    """Join tensors along an existing dim (all other dims must match)."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    ref = next((t for t in tensors if t.ndim), tensors[0])
    if ref.ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = _wrap_dim(dim, ref.ndim)
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
    from .._dtypes import promote_types
    dt = tensors[0].dtype
    for t in tensors[1:]:
        dt = promote_types(dt, t.dtype)
    tensors = [to_dtype(t, dt) for t in tensors]
    return _cat(*tensors, d, tuple(tuple(t.shape) for t in tensors))


concat = concatenate = cat


@defop("stack", variadic=1)
def _stack(xp, *args):
    *tensors, dim = args
    return xp.stack(tensors, axis=dim)


_stack.defvjp(lambda xp, g, ans, i, inputs, dim: g[(slice(None),) * dim + (i, Ellipsis)])


def stack(tensors, dim=0, *, out=None):
    """Join same-shaped tensors along a new dim."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for k, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(tensors[0].shape)} at entry 0 and {list(t.shape)} "
                               f"at entry {k}")
    from .._dtypes import promote_types
    dt = tensors[0].dtype
    for t in tensors[1:]:
        dt = promote_types(dt, t.dtype)
    tensors = [to_dtype(t, dt) for t in tensors]
    return _stack(*tensors, _wrap_dim(dim, tensors[0].ndim + 1))


@defop("unbind", n_in=1, nout=None)
def _unbind(xp, input, dim):
    return tuple(input[(slice(None),) * dim + (k, Ellipsis)] for k in range(input.shape[dim]))


_unbind.defvjp(lambda xp, g, ans, input, dim: xp.stack(g, axis=dim))


def unbind(input, dim=0):
    """The slices along ``dim``, as a tuple of views."""
    d = _wrap_dim(dim, input.ndim)
    outs = _unbind(input, d)
    return tuple(as_view(o, input, lambda xp, a, k=k: a[(slice(None),) * d + (k, Ellipsis)])
                 for k, o in enumerate(outs))


# --------------------------------------------------------------------------- the family's surface
__all__ = ["view", "view_as", "reshape", "reshape_as", "clone", "contiguous", "unsqueeze",
           "squeeze", "t", "transpose", "swapaxes", "swapdims", "expand", "expand_as", "cat",
           "concat", "concatenate", "stack", "unbind"]
METHODS = {name: globals()[name] for name in __all__
           if name not in ("cat", "concat", "concatenate", "stack")}
INPLACE = ()
ARRAY_API = {
    "reshape": lambda x, shape, copy=None: reshape(x, tuple(shape)),
    "broadcast_to": lambda x, shape: expand(x, tuple(shape)),
    "expand_dims": lambda x, axis: unsqueeze(x, axis),
    "squeeze": lambda x, axis: squeeze(x, axis),
    "swapaxes": lambda x, axis1, axis2: transpose(x, axis1, axis2),
    "astype": lambda x, dtype: to_dtype(x, dtype if isinstance(dtype, _dtypes.dtype)
                                        else _dtypes.from_numpy_dtype(dtype)),
    "stack": lambda arrays, axis=0: stack(arrays, dim=axis),
    "concat": lambda arrays, axis=0: cat(arrays, dim=axis),
}
