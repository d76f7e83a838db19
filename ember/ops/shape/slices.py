"""Views that cut pieces out of a tensor: slices, ``split`` / ``chunk`` / ``tensor_split``,
``unbind``, ``narrow``, ``select``, the sliding windows of ``unfold``, and the ``real`` /
``imag`` parts of a complex tensor. Like those of ``views.py``, their results share storage.
"""
from __future__ import annotations

import gc

import numpy as np

from ... import _dtypes, _recording
from ..._tensor import Tensor, _wrap_dim
from ...autograd.views import as_view
from ..registry import defop, public
from .helpers import _add_at, _embed
from .views import unsqueeze

# --------------------------------------------------------------------------- splitting


@defop("slice", n_in=1, jvp="linear", batch="moved")
def _slice(xp, input, key, shape):
    return input[key]


_slice.defvjp(lambda xp, g, ans, input, key, shape: _embed(xp, g, shape, key))
_slice.defvjp_into(_add_at)


def slice_view(input, dim, start, stop, step=1):
    """``input[..., start:stop:step, ...]`` along ``dim`` (a view, ``SliceBackward0``)."""
    key = (slice(None),) * dim + (slice(start, stop, step), Ellipsis)
    return as_view(_slice(input, key, input.shape), input, lambda xp, a: a[key])


def _split_forward(xp, input, dim, bounds):
    head = (slice(None),) * dim
    return tuple(input[head + (slice(a, b),)] for a, b in bounds.tolist())


def _split_rule(xp, g, ans, input, dim, bounds):
    """The pieces' gradients side by side; a piece whose gradient did not arrive (None) is
    zeros. Raw arrays: one buffer of zeros with the arrived pieces written in, not a zeros
    array per missing piece (a ``split(2)`` of 1M elements has 500,000 pieces)."""
    present = next(p for p in g if p is not None)
    shape = present.shape[:dim] + (int(bounds[-1, 1]),) + present.shape[dim + 1:]
    if not isinstance(present, Tensor):
        if all(p is not None for p in g):
            return xp.concatenate(g, axis=dim)
        out = xp.zeros(shape, dtype=present.dtype)
        head = (slice(None),) * dim
        for p, (a, b) in zip(g, bounds.tolist()):
            if p is not None:
                out[head + (slice(a, b),)] = p
        return out
    return xp.concatenate([p if p is not None else xp.new_zeros(
        present, shape[:dim] + (b - a,) + shape[dim + 1:])
        for p, (a, b) in zip(g, bounds.tolist())], axis=dim)


_split = defop("split", n_in=1, nout=None, jvp="linear",
               batch="moved")(_split_forward).defvjp(_split_rule)
_split_with_sizes = defop("split_with_sizes", n_in=1, nout=None, jvp="linear", batch="moved")(
    _split_forward).defvjp(_split_rule)
_split.missing_grads_as_none = _split_with_sizes.missing_grads_as_none = True


def _split_views(op, input, dim, sizes):
    # The bounds travel as one (pieces, 2) array: the backward walks its arguments for
    # reduced-precision arrays, a tuple of pairs costs it three steps per piece.
    stops = np.cumsum(np.asarray(sizes, dtype=np.int64))
    bounds = _recording.fixed(np.stack([stops - np.asarray(sizes, dtype=np.int64), stops],
                                       axis=1))

    def views():
        outs = op(input, dim, bounds)
        return tuple(as_view(o, input, _Piece(dim, a, b), multi_output=True)
                     for o, (a, b) in zip(outs, bounds.tolist()))
    return _collector_paused(views, len(sizes))


class _Piece:
    """The view function ``a[..., start:stop]`` (at ``dim``) of one piece of ``split``, or
    ``a[..., start]`` (``stop`` None) of ``unbind``: one small object per piece where a closure
    takes four (its function, defaults, key and slice), and ints where a slice would be one
    more object the garbage collector walks (see ``_collector_paused``)."""

    __slots__ = ("dim", "start", "stop")

    def __init__(self, dim, start, stop=None):
        self.dim, self.start, self.stop = dim, start, stop

    def __call__(self, xp, a):
        at = self.start if self.stop is None else slice(self.start, self.stop)
        return a[(slice(None),) * self.dim + (at, Ellipsis)]


_MANY = 10_000  # pieces from which the collector waits (its pause costs ~0.1 us: any would do)


def _collector_paused(make, count):
    """``make()`` with the garbage collector paused while it makes ``count`` pieces, when
    they are many. Each piece is objects that stay alive (its Tensor, its ``_Piece``), and
    the collector's full passes walk every live object each time their number has grown by a
    quarter: some 17 passes over a growing heap while ``split(2)`` makes 500,000 pieces, 60%
    of its time. Paused, they are walked about three times once it resumes."""
    if count < _MANY or not gc.isenabled():
        return make()
    gc.disable()
    try:
        return make()
    finally:
        gc.enable()


@public
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


@public
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


@public
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


@public
def tensor_split(input, indices_or_sections, dim=0):
    """Split into ``sections`` near-equal pieces, or at the given indices; slice views."""
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    arg = indices_or_sections
    if isinstance(arg, Tensor):
        if arg.dtype != _dtypes.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {arg.dtype._word}")
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


@defop("unbind", n_in=1, nout=None, jvp="linear", batch="moved")
def _unbind(xp, input, dim):
    return tuple(input[(slice(None),) * dim + (k, Ellipsis)] for k in range(input.shape[dim]))


def _unbind_rule(xp, g, ans, input, dim):
    """The slices' gradients stacked; one that did not arrive (None) is zeros (on raw arrays
    written into one buffer of zeros, as ``split``'s)."""
    present = next(p for p in g if p is not None)
    shape = present.shape[:dim] + (len(g),) + present.shape[dim:]
    if not isinstance(present, Tensor):
        if all(p is not None for p in g):
            return xp.stack(g, axis=dim)
        out = xp.zeros(shape, dtype=present.dtype)
        head = (slice(None),) * dim
        for k, p in enumerate(g):
            if p is not None:
                out[head + (k,)] = p
        return out
    return xp.stack([p if p is not None else xp.new_zeros(present, present.shape) for p in g],
                    axis=dim)


_unbind.defvjp(_unbind_rule)
_unbind.missing_grads_as_none = True


@_unbind.public
def unbind(input, dim=0):
    """The slices along ``dim``, as a tuple of views."""
    d = _wrap_dim(dim, input.ndim)
    _wrap_dim(d, input.ndim, scalar=False)  # a 0-d tensor has no slices

    def views():
        return tuple(as_view(o, input, _Piece(d, k), multi_output=True)
                     for k, o in enumerate(_unbind(input, d)))
    return _collector_paused(views, input.shape[d])


@public
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



# --------------------------------------------------------------------------- windows, diff


def _windows(xp, input, dim, size, step):
    """The sliding windows of ``input`` along ``dim``, as a strided view: that dim counts the
    windows, a new last dim of ``size`` runs through each."""
    n = (input.shape[dim] - size) // step + 1
    st = input.strides
    shape = input.shape[:dim] + (n,) + input.shape[dim + 1:] + (size,)
    strides = st[:dim] + (st[dim] * step,) + st[dim + 1:] + (st[dim],)
    return xp.lib.stride_tricks.as_strided(input, shape, strides)


@defop("unfold", n_in=1, jvp="linear", batch="moved")
def _unfold(xp, input, dim, size, step):
    return _windows(xp, input, dim, size, step)


def _unfold_rule(xp, g, ans, input, dim, size, step):
    """Each window's gradient added back at the elements it covers."""
    n = g.shape[dim]
    keys = [(slice(None),) * dim + (slice(k, k + step * (n - 1) + 1, step),)
            for k in range(size)]
    if not isinstance(g, Tensor):  # raw: added in place into one buffer (not one per k)
        total = xp.zeros(input.shape, dtype=g.dtype)
        for k, key in enumerate(keys):
            total[key] += g[..., k]
        return total
    total = None
    for k, key in enumerate(keys):
        part = _embed(xp, g[..., k], input.shape, key)
        total = part if total is None else total + part
    return total


_unfold.defvjp(_unfold_rule)


@public(function=False)  # (Tensor.unfold only: torch.unfold is no function)
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



# --------------------------------------------------------------------------- select, complex


@public
def select(input, dim, index):
    """The slice at ``index`` along ``dim`` (a view with one dim fewer): ``input[..., index]``."""
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.ndim)
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    return input[(slice(None),) * d + (index,)]  # (ops/indexing's getitem)



# ``x.real`` and ``x.imag`` of a complex tensor: views of its parts. PyTorch takes them as
# ``view_as_real(x)[..., 0]`` and ``[..., 1]``, hence the name of their nodes.
_real = defop("select", n_in=1, overload=0, jvp="linear",
              batch="moved")(lambda xp, input: input.real)
_real.defvjp(lambda xp, g, ans, input: g)
_imag = defop("select", n_in=1, overload=0, jvp="linear",
              batch="moved")(lambda xp, input: input.imag)
_imag.defvjp(lambda xp, g, ans, input: g * 1j)


def real(input):
    """The real part (a view) of a complex tensor; a real tensor itself."""
    if not input.is_complex():
        return input
    return as_view(_real(input), input, lambda xp, a: a.real)


public(real, method=property(real))  # Tensor.real is a property


def imag(input):
    """The imaginary part (a view) of a complex tensor."""
    if not input.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return as_view(_imag(input), input, lambda xp, a: a.imag)


public(imag, method=property(imag))  # Tensor.imag is a property
