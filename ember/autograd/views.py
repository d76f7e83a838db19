"""Views and in-place writes through them.

A view shares its base's storage and version counter. It remembers ``_base`` (the tensor
owning the storage) and ``_view_fn(xp, a)``, which cuts the same view out of any array or
Tensor shaped like the base. That one function serves both directions:

- an in-place op on a view (``y[0] = f(x)``, ``y[1:].add_(z)``) gives the base a
  ``CopySlices`` node: the base's gradient passes through unchanged except in the written
  region, where the in-place op's own backward takes over;
- the view itself then gets an ``AsStridedBackward0`` node reading its region of the base,
  as in PyTorch.

Every other view of the same storage learns of the write through the version counter they
share: a view remembers (``_vv``) the version at which its history was last made current, and
whoever reads a view's autograd state first calls ``fresh(view)``. When the version moved and
the base's history may have changed, the view's history is made anew from the base's current
one (PyTorch's "regenerate grad_fn" rule: an ``AsStridedBackward0`` over the base), so
``v = a[:2]; a.mul_(w); v.sum().backward()`` reaches ``w``.

As in PyTorch, a view made in no-grad mode, or one of several views returned by one op
(``split``, ``chunk``, ``unbind``), may not be written in place while autograd records: its
``_creation_meta`` says which, and ``check_rebase`` raises PyTorch's error.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _array_api, _dtypes
from .. import _xp as _raw
from .._upcalls import install
from . import grad_mode
from .graph import NO_ACCUMULATOR, Node, _short_name, gradient_edge, new_node

NO_GRAD = "no_grad"            # made while grad mode was off
MULTI_OUTPUT = "multi_output"  # one of several views returned by one op


def as_view(out, source, fn, multi_output=False):
    """Mark ``out`` as the view ``fn(source)``; it shares ``source``'s storage and version."""
    levels = getattr(out, "_levels", None)
    if levels is not None:  # inside vmap: the physical tensors, the view of every sample
        as_view(out._value, source._value, _every_sample(fn, len(levels)), multi_output)
        return out
    if type(source._data.dtype) in _dtypes.LOW_PRECISION_TYPES:
        # The op computed on a float32 copy (bfloat16: see ``ops.registry._upcast``); the view
        # is taken again from the source's own storage, so that writes show through.
        out._data = fn(_raw.namespace_of(source._data), source._data)
    base = source._base
    if base is None:
        out._base, out._view_fn = source, fn
    else:
        parent = source._view_fn
        out._base = base
        out._view_fn = lambda xp, a: fn(xp, parent(xp, a))
    vc = out._vc = source._vc
    out._vv = vc[0]
    grad = grad_mode._state.grad
    meta = NO_GRAD if not grad else MULTI_OUTPUT if multi_output else None
    out._creation_meta = meta or source._creation_meta  # a view of such a view is one too
    if not grad and out._base._rg:
        # As in PyTorch: it requires grad (its base does), yet it is no leaf of its own and
        # not connected to the base either: ops on it record, with no edge to it.
        out._rg = True
        out._acc = NO_ACCUMULATOR
    return out


@install
def fresh(view):
    """Make a view's history current before it is read (see the module docstring)."""
    if view._vc[0] != view._vv:
        _regenerate(view)


def _regenerate(view):
    base = view._base
    if view._grad_fn is None and not base._rg:
        return  # nothing to make: PyTorch keeps the view as it is (and its version mark)
    if view._creation_meta is not None:
        check_rebase(view, indirect=True)
    node = new_node(AsStridedBackward0, (gradient_edge(base),))
    node._view_fn = view._view_fn
    node._base_shape = base._data.shape
    node._base_dtype = base._data.dtype
    view._grad_fn, view._output_nr, view._rg = node, 0, True
    view._vv = view._vc[0]


def _every_sample(fn, nb):
    """A view function of one sample made the same view of each sample of a batch whose ``nb``
    leading dims are batch dims (see ``ops/batching.py``): sample 0's view, strided on through
    the batch with the batch dims' strides — a view, so writes through it land in the batch."""
    def view(xp, a):
        first = fn(xp, a[(0,) * nb])
        return xp.lib.stride_tricks.as_strided(first, a.shape[:nb] + first.shape,
                                               a.strides[:nb] + first.strides)
    return view


_REFUSAL = {
    MULTI_OUTPUT: " This view is the output of a function that returns multiple views. Such "
                  "functions do not allow the output views to be modified inplace. You should "
                  "replace the inplace operation by an out-of-place one.",
    NO_GRAD: " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
             "clarify your code by moving both the view and the inplace either both inside the "
             "no_grad block (if you don't want the inplace to be tracked) or both outside (if "
             "you want the inplace to be tracked).",
}


@install
def check_rebase(view, indirect=False):
    """PyTorch's error for a recorded in-place write into a view it cannot rebase
    (``indirect``: the write went to its base or another view of it)."""
    meta = view._creation_meta
    fn = view._grad_fn
    name = fn and _short_name(fn)
    what = "its base or another view of its base has been" if indirect else "is being"
    if meta == NO_GRAD or fn is None:
        prefix = (f"Output {view._output_nr} of {name} is a view of a view which was created in"
                  if fn is not None else "A view was created in")
        message = f"{prefix} no_grad mode and {what} modified inplace with grad mode enabled."
    else:
        message = f"Output {view._output_nr} of {name} is a view and {what} modified inplace."
    raise RuntimeError(message + _REFUSAL[meta])


def _xp(g, create_graph):
    return _array_api.on_device(g.device) if create_graph else _raw.namespace_of(g)


def _copy(g, create_graph):
    return g.clone() if create_graph else g.copy()


def _region(view_fn, xp, grad_base, create_graph):
    """The view's region of a base-shaped gradient, writable (``expand``'s are read-only)."""
    region = view_fn(xp, grad_base)
    if not create_graph and type(region) is np.ndarray and not region.flags.writeable:
        region = _raw.writable(region)
    return region


class CopySlices(Node):
    """The base's node after an in-place op on one of its views."""

    __slots__ = ("_inner", "_view_fn")

    def apply(self, grad_outputs, create_graph):
        g = grad_outputs[0]
        xp = _xp(g, create_graph)
        grad_base = _copy(g, create_graph)
        region = _region(self._view_fn, xp, grad_base, create_graph)
        inner = self._inner.apply([_copy(region, create_graph)], create_graph)
        region[...] = 0 if inner[0] is None else inner[0]
        first = grad_base if self.next_functions[0][0] is not None else None
        return [first, *inner[1:]]

    def release(self):
        self._inner.release()

    @property
    def _freed(self):
        return self._inner._freed


class AsStridedBackward0(Node):
    """A view's node after its base was rebased: its gradient lands in its region of the base."""

    __slots__ = ("_view_fn", "_base_shape", "_base_dtype")

    def apply(self, grad_outputs, create_graph):
        g = grad_outputs[0]
        xp = _xp(g, create_graph)
        shape = self._base_shape
        if self._base_dtype.kind != "c":
            # Where the view's elements lie in the base (its positions, viewed the same way):
            # the gradient is added there, so elements the view repeats (``expand``) sum.
            raw = _raw.namespace_of(g._data if create_graph else g)
            n = math.prod(shape)
            where = self._view_fn(raw, raw.arange(n).reshape(shape))
            if any(step == 0 and k > 1 for step, k in zip(where.strides, where.shape)):
                flat = xp.index_add_zeros(xp.reshape(g, (-1,)), (n,), (where.reshape(-1),))
                return [xp.reshape(flat, shape)]
        grad_base = xp.zeros(shape, dtype=g.dtype)
        region = _region(self._view_fn, xp, grad_base, create_graph)
        region[...] = g
        return [grad_base]

    def release(self):
        pass


@install
def rebase_view(view, node):
    """After ``node`` (an in-place op applied to ``view``) wrote into the base: rewire history."""
    base = view._base
    cs = new_node(CopySlices, (gradient_edge(base),) + tuple(node.next_functions[1:]))
    cs._inner = node
    cs._view_fn = view._view_fn
    base._grad_fn, base._output_nr, base._rg = cs, 0, True
    vnode = new_node(AsStridedBackward0, ((cs, 0),))
    vnode._view_fn = view._view_fn
    vnode._base_shape = base._data.shape
    vnode._base_dtype = base._data.dtype
    view._grad_fn, view._output_nr, view._rg = vnode, 0, True
    view._vv = view._vc[0]
