"""Shape ops whose result is a view: it shares storage and version counter with its input.

Each wraps its result with ``as_view``, so in-place writes through it reach the base (which then
gets a ``CopySlices`` node): view / reshape / flatten, (un)squeeze, permute / transpose and the
matrix transposes, conj, expand / broadcast_to, and the in-place reshapes (``unsqueeze_``...).
Views that cut pieces out of a tensor (slices, splits, select, unfold) are in ``slices.py``.
"""
from __future__ import annotations

import math

from ... import _broadcast, _errors, _recording
from ..._tensor import _wrap_dim
from ...autograd import forward_ad
from ...autograd.views import as_view
from .. import batching
from ..dtype_view import view_dtype
from ..registry import array_api, defop, public
from .helpers import (
    T_DEPRECATED,
    ZERO_DIM_DEPRECATED,
    _int_list,
    _shape_args,
    _unique_dims,
    _warn_once,
    infer_size,
)
from .layout import _clone, contiguous

# --------------------------------------------------------------------------- view, reshape


@defop("view", n_in=1, jvp="linear", batch="moved")
def _view(xp, input, shape, in_shape):
    return xp.reshape(input, shape)


_view.defvjp(lambda xp, g, ans, input, shape, in_shape: xp.reshape(g, in_shape))


@defop("unsafe_view", n_in=1, overload=0, jvp="linear", batch="moved")
def _unsafe_view(xp, input, shape, in_shape):
    return xp.reshape(input, shape)


_unsafe_view.defvjp(lambda xp, g, ans, input, shape, in_shape: xp.reshape(g, in_shape))



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
_reshape_alias = defop("_reshape_alias", n_in=1, jvp="linear", batch="loop")(_view.forward).defvjp(
    lambda xp, g, ans, input, shape, in_shape: xp.reshape(g, in_shape))


def _reshaped_view(input, shape, op=_view):
    out = op(input, shape, input.shape)
    return as_view(out, input, lambda xp, a: xp.reshape(a, shape))


@public
def view(input, *shape, size=None):
    """A view with a new shape (one dim may be -1); the storage must allow it."""
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int)):
        return view_dtype(input, shape[0])  # (a reinterpretation of the bytes)
    shape = infer_size(_shape_args(shape, size, "view", "size"), input.numel())
    if not _viewable(input, shape):
        raise RuntimeError(_errors.VIEW_STRIDE)
    return _reshaped_view(input, shape)


@public
def reshape(input, *args, shape=None):
    """``view`` when the storage allows it, otherwise a copy."""
    shape = infer_size(_shape_args(args, shape, "reshape", "shape"), input.numel())
    if _viewable(input, shape):
        contiguous = input._data.flags.c_contiguous or getattr(input, "_levels", None)
        return _reshaped_view(input, shape, _view if contiguous else _reshape_alias)
    return _unsafe_view(_clone(input), shape, input.shape)


array_api("reshape")(lambda x, shape, copy=None: reshape(x, tuple(shape)))


@public
def view_as(input, other):
    return view(input, other.shape)


@public
def reshape_as(input, other):
    return reshape(input, other.shape)


@public
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


@public
def ravel(input):
    """The entries as a vector (PyTorch views a contiguous copy when it must copy)."""
    return reshape(contiguous(input), (-1,))


@public
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



# --------------------------------------------------------------------------- (un)squeeze


@defop("unsqueeze", n_in=1, jvp="linear", batch=batching.moved(new_dim=True, scalar_ok=True))
def _unsqueeze(xp, input, dim):
    return xp.expand_dims(input, dim)


_unsqueeze.defvjp(lambda xp, g, ans, input, dim: xp.squeeze(g, axis=dim))


@_unsqueeze.public
def unsqueeze(input, dim):
    dim = _wrap_dim(dim, input.ndim + 1)
    return as_view(_unsqueeze(input, dim), input, lambda xp, a: xp.expand_dims(a, dim))


array_api("expand_dims")(lambda x, axis: unsqueeze(x, axis))


def _squeezed_shape(shape, dims):
    dims = _int_list(dims)
    return tuple(n for i, n in enumerate(shape) if n != 1 or i not in dims)


def _squeeze_forward(xp, input, dims, in_shape):
    return xp.reshape(input, _squeezed_shape(in_shape, dims))


def _squeeze_rule(xp, g, ans, input, dims, in_shape):
    return xp.reshape(g, in_shape)


@defop("squeeze", n_in=1, jvp="linear", batch="moved")
def _squeeze_all(xp, input, in_shape):
    return xp.reshape(input, tuple(s for s in in_shape if s != 1))


_squeeze_all.defvjp(lambda xp, g, ans, input, in_shape: xp.reshape(g, in_shape))
# One forward, named as PyTorch names the overloads: squeeze(dim), squeeze(dims), and the
# squeeze ``matmul`` applies to a vector-matrix product.
_squeeze_dim = defop("squeeze", n_in=1, overload=1, jvp="linear",
                     batch="moved")(_squeeze_forward).defvjp(
    _squeeze_rule)
_squeeze_dims = defop("squeeze", n_in=1, overload=2, jvp="linear",
                      batch="moved")(_squeeze_forward).defvjp(
    _squeeze_rule)
_squeeze_matmul = defop("squeeze", n_in=1, overload=4, jvp="linear",
                        batch="moved")(_squeeze_forward).defvjp(
    _squeeze_rule)


@public
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


array_api("squeeze")(lambda x, axis: squeeze(x, axis))


@defop("alias", n_in=1, jvp="linear", batch="pointwise")
def _alias(xp, input):
    return input[...]


_alias.defvjp(lambda xp, g, ans, input: g)



# --------------------------------------------------------------------------- permutations


@defop("permute", n_in=1, jvp="linear", batch=batching.moved(permutation=True))
def _permute(xp, input, dims):
    return xp.transpose(input, dims)


_permute.defvjp(lambda xp, g, ans, input, dims:
                xp.transpose(g, tuple(sorted(range(len(dims)), key=dims.__getitem__))))


@_permute.public
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


array_api("transpose")(lambda x, axes=None: permute(x, tuple(range(x.ndim - 1, -1, -1))
                                                  if axes is None else tuple(axes)))


def _t_batched(op, x, value, params, nb, batch, levels):
    """The batching rule of ``t``: the last two dims swapped (a vector or scalar as it is)."""
    out = value.transpose(-1, -2) if x.ndim == 2 else value.view_as(value)
    return batching.wrap(out, levels)


@defop("t", n_in=1, jvp="linear", batch=batching.single(_t_batched))
def _t(xp, input):
    return input.T


_t.defvjp(lambda xp, g, ans, input: xp.swapaxes(g, 0, 1) if g.ndim == 2 else g)


@_t.public
def t(input):
    """Transpose of a tensor of at most 2 dims (a view)."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return as_view(_t(input), input, lambda xp, a: a.T)


def _swapaxes(xp, a, dim0, dim1):
    """``a`` with two dims swapped; a 0-d ``a`` (dims 0 and -1 name it) as it is, a view."""
    return xp.swapaxes(a, dim0, dim1) if a.ndim else a[...]


@defop("transpose", n_in=1, overload=0, jvp="linear", batch="moved", aliases=("swapdims",))
def _transpose(xp, input, dim0, dim1):
    return _swapaxes(xp, input, dim0, dim1)


_transpose.defvjp(lambda xp, g, ans, input, dim0, dim1: _swapaxes(xp, g, dim0, dim1))


@_transpose.public
def transpose(input, dim0, dim1):
    """Swap two dims (a view)."""
    d0, d1 = _wrap_dim(dim0, input.ndim), _wrap_dim(dim1, input.ndim)
    return as_view(_transpose(input, d0, d1), input,
                   lambda xp, a: _swapaxes(xp, a, d0, d1))


@public
def swapaxes(input, axis0, axis1):
    """``transpose`` under NumPy's name (and argument names)."""
    return transpose(input, axis0, axis1)


array_api("swapaxes")(lambda x, axis1, axis2: transpose(x, axis1, axis2))


@defop("conj", n_in=1, jvp="linear", batch="pointwise")
def _conj(xp, input):
    return xp.conj(input)


_conj.defvjp(lambda xp, g, ans, input: xp.conj(g))


@_conj.public
def conj(input):
    """The complex conjugate; real tensors are returned as they are. ember computes it at
    once, but reports ``is_conj()`` as PyTorch's lazy conjugate would until resolved."""
    if not input.is_complex():
        return input
    out = _conj(input)
    out.__dict__["_lazy_conj"] = True
    return out


array_api("conj")(lambda x: _conj(x) if x.is_complex() else x)


@public
def resolve_conj(input):
    """A tensor with its conjugation materialised: a copy of a ``conj()`` result, else itself."""
    return _clone(input) if input.is_conj() else input


@public
def resolve_neg(input):
    """Itself: ember has no lazily negated tensors."""
    return input


@public(function=False, name="is_conj")
def _is_conj(input):
    return input.__dict__.get("_lazy_conj", False)


@public(function=False, name="is_neg")
def _is_neg(input):
    return False


@public(function=False, name="T")
@property
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


@public(function=False, name="mT")
@property
def _mT(input):
    return _matrix_transpose(input, "mT", False)


@public(function=False, name="mH")
@property
def _mH(input):
    return _matrix_transpose(input, "mH", True)


@public
def adjoint(input):
    """The conjugate transpose of the last two dims."""
    return _matrix_transpose(input, "adjoint()", True)


@public(function=False, name="H")
@property
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


@public(aliases=("moveaxis",))
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



# --------------------------------------------------------------------------- broadcasting


@defop("expand", n_in=1, jvp="linear", batch=batching.moved(rank_from="shape"))
def _expand(xp, input, shape):
    return xp.broadcast_to(input, shape)


_expand.defvjp(lambda xp, g, ans, input, shape: g)  # the engine sums g back to input's shape


@_expand.public
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


@public
def expand_as(input, other):
    return expand(input, other.shape)


@public
def broadcast_to(input, size):
    return expand(input, size)


array_api("broadcast_to")(lambda x, shape: expand(x, tuple(shape)))


@public(method=False)
def broadcast_tensors(*tensors):
    """The tensors expanded to their common shape (those already of that shape as they are)."""
    shape = _broadcast.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(t if t.shape == shape else expand(t, shape) for t in tensors)



# --------------------------------------------------------------------------- in-place reshapes
# ``x.unsqueeze_(0)`` gives x itself a new shape over the same storage. PyTorch numbers these
# nodes apart from the out-of-place ops' (``UnsqueezeBackward1``, ``SqueezeBackward3``...).
_unsqueeze_inplace = defop("unsqueeze", n_in=1, overload=1, jvp="linear", batch=_unsqueeze.batch)(
    _unsqueeze.forward).defvjp(*_unsqueeze.rules)
_squeeze_all_inplace = defop("squeeze", n_in=1, overload=3, jvp="linear", batch="moved")(
    _squeeze_all.forward).defvjp(*_squeeze_all.rules)
_squeeze_dim_inplace = defop("squeeze", n_in=1, overload=4, jvp="linear", batch="moved")(
    _squeeze_forward).defvjp(_squeeze_rule)
_squeeze_dims_inplace = defop("squeeze", n_in=1, overload=5, jvp="linear", batch="moved")(
    _squeeze_forward).defvjp(_squeeze_rule)
_t_inplace = defop("t", n_in=1, overload=1, jvp="linear", batch=_t.batch)(_t.forward).defvjp(
    *_t.rules)
_transpose_inplace = defop("transpose", n_in=1, overload=1, jvp="linear", batch="moved")(
    _transpose.forward).defvjp(*_transpose.rules)


def _reshape_in_place(self, op, params, view):
    """Make ``self`` the result of the view op ``op(self, *params)``: same storage, new shape,
    the op's node as its history; ``view(xp, a)`` cuts the same view out of an array."""
    self._check_inplace()
    out = op(self, *params)
    _recording.reshaped(self)
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


@public(function=False)
def unsqueeze_(self, dim):
    """In-place ``unsqueeze``: a size-1 dim inserted at ``dim``."""
    dim = _wrap_dim(dim, self.ndim + 1)
    return _reshape_in_place(self, _unsqueeze_inplace, (dim,),
                             lambda xp, a: xp.expand_dims(a, dim))


@public(function=False)
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


@public(function=False)
def t_(self):
    """In-place ``t``: a matrix transposed."""
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return _reshape_in_place(self, _t_inplace, (), lambda xp, a: a.T)


@public(function=False, aliases=("swapdims_",))
def transpose_(self, dim0, dim1):
    """In-place ``transpose``: two dims swapped."""
    d0, d1 = _wrap_dim(dim0, self.ndim), _wrap_dim(dim1, self.ndim)
    return _reshape_in_place(self, _transpose_inplace, (d0, d1),
                             lambda xp, a: _swapaxes(xp, a, d0, d1))


@public(function=False)
def swapaxes_(self, axis0, axis1):
    return transpose_(self, axis0, axis1)
