"""Shape ops that join tensors into a new one (copies): ``cat`` / ``stack`` and their
``hstack`` ... ``column_stack`` spellings, ``atleast_Nd``, ``diff``, and the grids and blocks
(``meshgrid``, ``cartesian_prod``, ``combinations``, ``block_diag``, ``vander``,
``broadcast_shapes``).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ... import _dtypes, _xp
from ..._creation import empty, zeros
from ..._tensor import Size, Tensor, _wrap_dim
from .. import batching
from ..autocast import autocast_op
from ..registry import array_api, defop, public
from ..sorting import cumprod
from .copies import flip
from .helpers import _warn_once
from .layout import to_dtype
from .views import expand, flatten, reshape, unsqueeze, view

# --------------------------------------------------------------------------- joining


def _legacy_empty(shape, ndim):
    """PyTorch lets a 1-d empty tensor join tensors of any rank; it contributes nothing."""
    return len(shape) == 1 and shape[0] == 0 and ndim != 1


def _joined_batched(op, args, levels):
    """The batching rule of ``cat`` and ``stack``: every input expanded to the batch, ``dim``
    moved past it."""
    inputs = args[:len(args) - op.variadic]
    dim = args[len(inputs)]
    values = [batching.physical(t, levels, expand=True) for t in inputs]
    nb = len(levels)
    if op.name == "stack":
        return batching.wrap(stack(values, batching.shift(dim, inputs[0].ndim + 1, nb)), levels)
    ndim = max(t.ndim for t in inputs)
    values = [v for v, t in zip(values, inputs) if not (t.ndim == 1 and t.shape[0] == 0)
              or ndim == 1]  # cat skips legacy empty 1-d inputs
    return batching.wrap(cat(values, batching.shift(dim, ndim, nb)), levels)


@defop("cat", variadic=2, jvp="linear", batch=_joined_batched, method=False,
       aliases=("concat", "concatenate"))
def _cat(xp, *args):
    shapes = args[-1]
    if (0,) not in shapes:  # (no legacy empty input: the common case, without the loops below)
        return xp.concatenate(args[:-2], axis=args[-2])
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


def _plain_shapes(tensors, dim):
    """The inputs' shapes when ``cat`` needs none of its checks and casts: plain Tensors of
    one dtype and rank (not 0, no legacy empty 1-d one), equal but along ``dim``, a valid
    dim. None otherwise, and the general path decides (and raises). An RNN step cats two
    small tensors; read from the arrays in one pass, this costs 1 µs where the general path's
    ``Size`` shapes cost 8."""
    first = tensors[0]
    if type(first) is not Tensor or type(dim) is not int:
        return None
    data = first._data
    dtype, ref = data.dtype, data.shape
    ndim = len(ref)
    if not (ndim and -ndim <= dim < ndim) or ref == (0,):
        return None
    d = dim % ndim
    shapes = []
    for t in tensors:
        if type(t) is not Tensor:
            return None
        data = t._data
        shape = data.shape
        if data.dtype != dtype or len(shape) != ndim or shape == (0,) or \
                shape[:d] != ref[:d] or shape[d + 1:] != ref[d + 1:]:
            return None
        shapes.append(shape)
    return tuple(shapes)


@_cat.public
@autocast_op("cat")
def cat(tensors, dim=0):
    """Join tensors along an existing dim (all other dims must match)."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    shapes = _plain_shapes(tensors, dim)
    if shapes is not None:
        return _cat(*tensors, dim % len(shapes[0]), shapes)
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


array_api("concat")(lambda arrays, axis=0: cat(arrays, dim=axis))
array_api("concatenate")(lambda arrays, axis=0: cat(arrays, dim=axis))


@defop("stack", variadic=1, jvp="linear", batch=_joined_batched, method=False)
def _stack(xp, *args):
    *tensors, dim = args
    shape = tensors[0].shape
    if dim < len(shape):
        # one concatenation into the result, along ``dim``: entry j of input i lands at
        # i * shape[dim] + j there, which the reshape splits into (i, j). xp.stack reshapes
        # every input first (32 small windows: 8.5 µs against 36; an RNN's 16 hidden states
        # on dim 1: 21 µs against 25)
        return xp.concatenate(tensors, axis=dim).reshape(
            shape[:dim] + (len(tensors),) + shape[dim:])
    return xp.stack(tensors, axis=dim)


_stack.defvjp(lambda xp, g, ans, i, inputs, dim: g[(slice(None),) * dim + (i, Ellipsis)])


def _alike(tensors):
    """Whether ``stack`` needs none of its checks and casts: plain Tensors of one dtype and
    shape, read from their arrays in one pass. A batch of 32 token windows (the usual
    ``torch.stack([data[i:i + T] for i in ix])``) costs 5 µs here against 60 through the
    ``Size`` shapes and dtype promotion."""
    first = tensors[0]
    if type(first) is not Tensor:
        return False
    data = first._data
    dtype, shape = data.dtype, data.shape
    for t in tensors:
        if type(t) is not Tensor:
            return False
        data = t._data
        if data.shape != shape or data.dtype != dtype:
            return False
    return True


@_stack.public
@autocast_op("stack")
def stack(tensors, dim=0):
    """Join same-shaped tensors along a new dim."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    if _alike(tensors) and type(dim) is int:
        return _stack(*tensors, _wrap_dim(dim, tensors[0]._data.ndim + 1))
    for k, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(tensors[0].shape)} at entry 0 and {list(t.shape)} "
                               f"at entry {k}")
    tensors = _common_dtype(tensors)
    return _stack(*tensors, _wrap_dim(dim, tensors[0].ndim + 1))


array_api("stack")(lambda arrays, axis=0: stack(arrays, dim=axis))


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


@public(method=False)
def atleast_1d(*tensors):
    return _at_least(tensors, _atleast_1d)


@public(method=False)
def atleast_2d(*tensors):
    return _at_least(tensors, _atleast_2d)


@public(method=False)
def atleast_3d(*tensors):
    return _at_least(tensors, _atleast_3d)


def _nonempty(tensors, name):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


@public(method=False)
def hstack(tensors):
    """Join along dim 1 (dim 0 for vectors); scalars count as vectors."""
    tensors = [_atleast_1d(t) for t in _nonempty(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


@public(method=False, aliases=("row_stack",))
def vstack(tensors):
    """Stack rows: join along dim 0, vectors becoming ``1 x n`` rows."""
    return cat([_atleast_2d(t) for t in _nonempty(tensors, "vstack")], 0)


@public(method=False)
def dstack(tensors):
    """Join along the third dim, lower-rank inputs raised to 3 dims."""
    return cat([_atleast_3d(t) for t in _nonempty(tensors, "dstack")], 2)


@public(method=False)
def column_stack(tensors):
    """Join columns: vectors (and scalars) become ``n x 1`` columns, then join along dim 1."""
    tensors = _nonempty(tensors, "column_stack")
    return cat([reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in tensors], 1)



@public
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



# --------------------------------------------------------------------------- grids and blocks
MESHGRID_INDEXING = (
    "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.")


@public(method=False)
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


@public(method=False)
def cartesian_prod(*tensors):
    """The rows of all combinations of one element of each vector (``itertools.product``)."""
    for t in tensors:
        _check_vector(t)
    if len(tensors) == 1:
        return tensors[0]
    return stack([flatten(g) for g in meshgrid(*tensors, indexing="ij")], 1)


@public(method=False)
def combinations(input, r=2, with_replacement=False):
    """The rows of all length-``r`` combinations of the vector's elements
    (``itertools.combinations``, or ``combinations_with_replacement``)."""
    _check_vector(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return Tensor._make(_xp.namespace_of(input._data).empty((0,), dtype=input._data.dtype),
                            None, False)
    raw = _xp.namespace_of(input._data)
    # one gather per column, stacked: PyTorch's graph (its columns are masked selections)
    return stack([input.index_select(0, Tensor._make(raw.asarray(column), None, False))
                  for column in _combination_indices(input.numel(), r, with_replacement)], 1)


def _combination_indices(n, r, with_replacement):
    """The columns of the combinations' index rows in lexicographic order (the order of
    PyTorch's mask over the ``n**r`` grid), built directly: only the wanted rows, not the grid
    (which at ``n = 1000, r = 3`` is 7.5 GiB). Each step extends every row by each index after
    its last (or from its last on, with replacement). Integer bookkeeping, on the host, in
    int32 where it fits (the index columns are the op's largest temporaries)."""
    itype = np.int32 if n < 2 ** 31 else np.int64
    columns = [np.arange(n, dtype=itype)]
    for _ in range(r - 1):
        first = columns[-1] + (0 if with_replacement else 1)
        counts = n - first
        starts = np.cumsum(counts, dtype=np.int64) - counts
        new = (np.repeat(first - starts, counts) + np.arange(int(counts.sum()))).astype(itype)
        columns = [np.repeat(c, counts) for c in columns] + [new]
    return columns


@defop("block_diag", variadic=2, jvp="linear", batch="loop", method=False)
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


@_block_diag.public
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
    width = corners[-1][1]
    rows = []
    for t, (r1, c1, r0, c0) in zip(tensors, _blocks(corners)):
        block = reshape(to_dtype(t, dtype), (r1 - r0, c1 - c0))
        rows.append(cat([zeros(r1 - r0, c0, dtype=dtype), block,
                         zeros(r1 - r0, width - c1, dtype=dtype)], 1))
    return cat(rows, 0)


@public(method=False)
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


@public(method=False)
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a vector: columns ``x**0 .. x**(N-1)`` (decreasing powers
    unless ``increasing``); integers give int64. Built as PyTorch builds it (ones, a running
    product written into columns 1.., flipped), so the result's node is PyTorch's."""
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
