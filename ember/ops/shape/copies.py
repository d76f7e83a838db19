"""Shape ops that PyTorch computes as copies, and so does ember: ``repeat`` / ``tile`` /
``repeat_interleave``, the reorderings ``flip`` / ``roll`` / ``rot90``, and ``sum_to_size``.
Joins of several tensors are in ``joins.py``.
"""
from __future__ import annotations

from ... import _xp
from ..._tensor import Tensor, _wrap_dim
from .. import batching
from ..registry import array_api, defop, public
from .helpers import _int_list, _shape_args, _unique_dims
from .layout import _clone
from .views import expand, flatten, reshape, unsqueeze

# --------------------------------------------------------------------------- repeating


@defop("repeat", n_in=1, jvp="linear", batch=batching.moved(rank_from="repeats"))
def _repeat(xp, input, repeats, in_shape):
    return xp.tile(input, repeats)


def _repeat_rule(xp, g, ans, input, repeats, in_shape):
    """Each output dim is ``repeats[i]`` copies of the input dim: sum the copies."""
    padded = (1,) * (len(repeats) - len(in_shape)) + tuple(in_shape)
    g = xp.reshape(g, tuple(n for pair in zip(repeats, padded) for n in pair))
    return xp.sum(g, axis=tuple(range(0, 2 * len(repeats), 2)))


_repeat.defvjp(_repeat_rule)


@_repeat.public
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


@public
def tile(input, *args, dims=None):
    """``repeat`` with missing leading repeats taken as 1."""
    dims = _shape_args(args, dims, "tile", "dims")
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


array_api("tile")(lambda x, reps: tile(x, tuple(reps)))


@public
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
    size = input.shape[d] if input.ndim else 1
    if repeats.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if repeats.numel() == 1:
        repeats = expand(reshape(repeats, (1,)), (size,))
    elif repeats.shape[0] != size:
        raise RuntimeError("repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {repeats.shape[0]} and input.size({dim}) = {size}")
    return input.index_select(d, _repeated_indices(repeats, size))  # (ops/indexing's)


def _repeated_indices(repeats, size):
    """``k`` repeated ``repeats[k]`` times, as an int64 tensor."""
    reps = repeats._data
    if reps.dtype.kind not in "iu":
        raise NotImplementedError(
            f"\"repeat_interleave_cpu\" not implemented for '{repeats.dtype._word}'")
    if reps.size and reps.min() < 0:
        raise RuntimeError("repeats can not be negative")
    xp = _xp.namespace_of(reps)
    return Tensor._make(xp.repeat(xp.arange(size), reps).astype("int64"), None, False)



# --------------------------------------------------------------------------- reordering copies


@defop("flip", n_in=1, jvp="linear", batch="moved")
def _flip(xp, input, dims):
    return xp.flip(input, axis=dims).copy()


_flip.defvjp(lambda xp, g, ans, input, dims: xp.flip(g, axis=dims))


@_flip.public
def flip(input, *args, dims=None):
    """A copy with the order of entries reversed along each of ``dims``."""
    if dims is not None and args:
        raise TypeError("flip() got multiple values for argument 'dims'")
    if dims is None and not args:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    dims = _unique_dims(_shape_args(args) if dims is None else _int_list(dims), input.ndim)
    return _flip(input, dims if input.ndim else ())


array_api("flip")(lambda x, axis=None: flip(x, tuple(range(x.ndim)) if axis is None else
                                             axis))


@public
def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return _flip(input, (1,))


@public
def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return _flip(input, (0,))


@defop("roll", n_in=1, jvp="linear", batch=batching.moved(flat_without="dims"))
def _roll(xp, input, shifts, dims):
    return xp.roll(input, shifts, axis=dims)


_roll.defvjp(lambda xp, g, ans, input, shifts, dims: xp.roll(g, _negated(shifts), axis=dims))


def _negated(shifts):
    return -shifts if isinstance(shifts, int) else tuple(-s for s in shifts)


@_roll.public
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


array_api("roll")(lambda x, shift, axis=None: roll(x, shift, axis))


@defop("rot90", n_in=1, jvp="linear", batch="moved")
def _rot90(xp, input, k, dims):
    return xp.rot90(input, k, axes=dims).copy()


_rot90.defvjp(lambda xp, g, ans, input, k, dims: xp.rot90(g, -k, axes=dims))


@_rot90.public
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


array_api("rot90")(lambda x, k=1, axes=(0, 1): rot90(x, k, axes))



@public(function=False)
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
