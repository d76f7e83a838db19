"""Forward-mode AD (``torch.autograd.forward_ad``): dual tensors carry a tangent through ops.

Inside ``with dual_level():``, ``make_dual(x, t)`` gives ``x`` a *tangent* ``t`` (a direction).
Every op then computes, next to its result, the result's tangent: the Jacobian-vector product
``J·t`` of its inputs' tangents. ``unpack_dual(y)`` reads it back. One forward pass gives the
directional derivative of every intermediate, where reverse mode needs one backward per output.

Each op declares its JVP beside its VJP, in ``ember/ops`` (see ``Op.defjvp`` and the ``jvp=``
kinds of ``defop``): elementwise ops reuse their VJP rule (their Jacobian is diagonal, so
``Jᵀ·v`` and ``J·t`` are the same formula), linear ops apply themselves to the tangents, and
the rest state their own rule. An op with none raises PyTorch's NotImplementedError naming it.

Tangents are ember Tensors, computed with grad mode as it is, so a tangent has a backward graph
when its inputs do (forward-over-reverse: ``jvp`` of a gradient is a Hessian-vector product).
As in PyTorch, one level can be active at a time.
"""
from __future__ import annotations

import collections
import itertools
import weakref

from .. import _autograd_state, _dispatch, _errors, _xp
from .._upcalls import install

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]


state = _autograd_state.forward_state  # (its class lives below _tensor.py)
_levels = itertools.count()  # a new number per level: tangents kept by nodes name theirs

UnpackedDualTensor = collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])


def enter_dual_level():
    """Open a new level of forward AD and return its number (PyTorch allows one at a time)."""
    if state.level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    state.level = next(_levels)
    state.active = True
    state.duals = []
    return state.level


def exit_dual_level(*, level=None):
    """Close the level: every tangent made in it is dropped."""
    if state.level is None or (level is not None and level != state.level):
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    for ref in state.duals:
        tensor = ref()
        if tensor is not None:
            tensor._fw = None
    state.level = None
    state.active = False
    state.duals = []


class dual_level:
    """``with dual_level():`` — the scope in which dual tensors and their tangents exist."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` whose tangent is ``tangent`` (same shape; floating or complex)."""
    if state.level is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    for t in (tensor, tangent):
        if not (t.is_floating_point() or t.is_complex()):
            which = "primal" if t is tensor else "tangent"
            raise ValueError(f"Expected {which} to be floating point or complex, but got: "
                             f"{t.dtype}")
    if tangent.shape != tensor.shape:
        raise RuntimeError(_errors.TANGENT_SIZE.format(size=list(tensor.shape),
                                                       tangent=list(tangent.shape)))
    levels = set(getattr(tangent, "_levels", ()))
    if not levels <= set(getattr(tensor, "_levels", ())):
        batching = _dispatch.batched  # inside vmap: a tangent per sample makes a primal per sample
        levels = tuple(sorted(levels | set(batching.levels_of(tensor))))
        tensor = batching.wrap(batching.physical(tensor, levels, expand=True), levels)
    dual = tensor.view(tensor.shape)
    set_tangent(dual, tangent if tangent.dtype == tensor.dtype else tangent.to(tensor.dtype))
    return dual


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)``: a view of ``tensor`` without tangent, and the tangent (or None)."""
    tangent = tensor._fw if state.level is not None else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    from ..ops.shape.views import _alias  # lazy: ops build on autograd
    with _primal_only():
        primal = _alias(tensor)
    return UnpackedDualTensor(primal, tangent)


def set_tangent(tensor, tangent):
    tensor._fw = tangent
    # (a vmap BatchedTensor keeps its tangent on its physical tensor: that one is cleared)
    state.duals.append(weakref.ref(getattr(tensor, "_value", tensor)))


@install
def write_tangent(tensor, tangent):
    """After an in-place op on ``tensor``: its tangent is now ``tangent`` (None: zero), and
    if it is a view, that region of its base's tangent too."""
    xp = _xp.namespace_of(tensor._data)
    new = tangent._data if tangent is not None else xp.zeros_like(tensor._data)
    base = tensor._base
    if base is not None:
        if base._fw is None:
            set_tangent(base, base._make(xp.zeros_like(base._data), None, False))
        tensor._view_fn(xp, base._fw._data)[...] = new
    set_tangent(tensor, tensor._make(new, None, False) if tangent is None else tangent)


def propagate(op, args, n_in, results):
    """Give the outputs of ``op`` (called on ``args``) their tangents, if an input has one."""
    tangents = [getattr(a, "_fw", None) for a in args[:n_in]]
    if all(t is None for t in tangents):
        return
    with _primal_only():
        outs = op.jvp(args, n_in, tangents, results)
    if outs is None:
        return
    for result, tangent in zip(results, outs):
        if result.is_floating_point() or result.is_complex():
            if tangent is None:  # the output does not depend on the inputs here
                tangent = result._make(_xp.namespace_of(result._data).zeros_like(result._data),
                                       None, False)
            if tangent.shape != result.shape:
                tangent = tangent.expand(result.shape)
            if tangent.dtype != result.dtype:
                tangent = tangent.to(result.dtype)
            set_tangent(result, tangent)
            node = result._grad_fn
            if node is not None:  # its backward rebuilds this output: it needs the tangent too
                node.__dict__.setdefault("_out_tangents", {})[result._output_nr] = (
                    state.level, tangent)


def output_tangent(node, output_nr):
    """The tangent, in the open level, of the output ``output_nr`` of ``node`` (or None)."""
    kept = node.__dict__.get("_out_tangents")
    if kept is None or output_nr not in kept:
        return None
    level, tangent = kept[output_nr]
    return tangent if level == state.level else None


class _primal_only:
    """Ops run inside do not propagate tangents (a JVP rule computes with primal values)."""

    def __enter__(self):
        self.previous, state.active = state.active, False

    def __exit__(self, *exc):
        state.active = self.previous


def _interpose(op, args, proceed):
    """The forward-AD interposer (``_dispatch.py``): the op's results get their tangents."""
    result = proceed(args)
    n_in = op.n_in if op.variadic is None else len(args) - op.variadic
    propagate(op, args, n_in, (result,) if op.nout == 1 else result)
    return result


_dispatch.register(_dispatch.Interposer("forward AD", 30, lambda: state._active, _interpose))
