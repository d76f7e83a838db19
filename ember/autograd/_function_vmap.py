"""``autograd.Function`` under the function transforms: its ``vmap`` rule, generated or given.

PyTorch runs a custom Function inside ``vmap`` only when the Function says how
(``Function.apply`` reaches :func:`functorch_apply` here whenever a transform is running):

- a ``vmap`` staticmethod, ``vmap(info, in_dims, *args) -> (output, out_dims)``: it is
  called with the arguments unwrapped one level (the mapped dim of each batched argument in
  front, at its ``in_dims`` entry; ``None`` for the others) and the level itself not running;
  what it returns is batched again along ``out_dims``. When no argument is batched at that
  level the Function runs as if the level were not there and the rule is not called.
- ``generate_vmap_rule = True``: the Function's ``forward``, ``setup_context``, ``backward``
  and ``jvp`` are each mapped over the batch (a Function made for the call,
  ``Vmapped<Name>``, applied to the unwrapped arguments). The saved tensors keep their
  batch dims beside them, so ``backward`` sees the samples it saw in ``forward``.
- neither (or both): PyTorch's RuntimeError. So does a Function whose ``forward`` takes
  ``ctx`` (no ``setup_context``) under any transform, vmap or not.

Either way the graph is recorded on the unwrapped (physical) tensors, the way ember records
every op under vmap (``ops/batching.py``), so gradients of and through the mapped Function —
``vmap(grad(f))``, ``grad(vmap(f))``, ``jacrev`` — are per sample. (The old behaviour, the
Function's ``forward`` run on the batched tensors and its ``backward`` on the whole batch's
gradients, summed per-sample gradients together.)

ember's own Functions (defined in ``ember.*``) are written for batched tensors and run as
they are.
"""
from __future__ import annotations

from typing import NamedTuple

from .. import _dispatch
from .._tensor import Tensor, _wrap_dim
from . import function
from .function import Function

_SEE = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"
_NO_SETUP = ("In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
             "jacrev, ...), it must override the setup_context staticmethod. " + _SEE)
_TWO = ("Expected the vmap staticmethod to have two returns, an output and out_dims with "
        "pytree structure compatible with the output. ")


class VmapInfo(NamedTuple):
    """What a ``vmap`` staticmethod is told about the level: its batch size and randomness."""

    batch_size: int
    randomness: str


def functorch_apply(cls, args, kwargs):
    """``cls.apply(*args, **kwargs)`` while a transform runs, or ``NotImplemented`` for the
    plain path (no vmap level running, or one of ember's own Functions)."""
    if cls.__module__.startswith("ember."):
        return NotImplemented
    if cls.setup_context is Function.setup_context:
        raise RuntimeError(_NO_SETUP)
    state = _dispatch.vmap
    if not state.levels:
        return NotImplemented
    name = cls.__name__
    if any(isinstance(v, Tensor) for v in kwargs.values()):
        raise NotImplementedError(
            "Run vmap on autograd.Function with kwarg-only Tensor args. Please do not pass "
            f"kwarg-only Tensors to autograd.Function. Got: {kwargs}")
    given = cls.vmap is not Function.vmap
    if cls.generate_vmap_rule and given:
        raise RuntimeError(
            f"You tried to vmap over {name}, but it has both generate_vmap_rule=True and an "
            "overridden vmap staticmethod. Please set generate_vmap_rule=False or delete the "
            "overridden vmap staticmethod to avoid ambiguity. " + _SEE)
    if not cls.generate_vmap_rule and not given:
        raise RuntimeError(
            f"You tried to vmap over {name}, but it does not have vmap support. Please "
            "override and implement the vmap staticmethod or set generate_vmap_rule=True. "
            + _SEE)
    level, size, randomness = state.levels[-1]
    unwrapped, in_dims = zip(*(_unwrap(a, level) for a in args)) if args else ((), ())
    with _lowered():
        if all(d is None for d in in_dims):
            return cls.apply(*args, **kwargs)
        if given:
            result = cls.vmap(VmapInfo(size, randomness), in_dims, *unwrapped, **kwargs)
            output, out_dims = _check_rule_result(result)
        else:
            vmapped = _vmapped_class(cls, in_dims, size, randomness)
            output = vmapped.apply(*unwrapped)
            out_dims = vmapped.out_dims
    originals = {id(u): a for u, a in zip(unwrapped, args) if isinstance(u, Tensor)}
    return _rewrap(output, out_dims, level, originals)


# ---------------------------------------------------------------------------- levels


def _levels_of(x):
    return _dispatch.batched.levels_of(x) if isinstance(x, Tensor) else ()


def _unwrap(x, level):
    """``(x without ``level``, its mapped dim there)``: the dim in front, or None."""
    if isinstance(x, (list, tuple)) and any(level in _levels_of(t) for t in x):
        raise NotImplementedError("vmap of an autograd.Function with batched tensors inside a "
                                  "list or tuple argument is not supported by ember")
    own = _levels_of(x)
    if level not in own:
        return x, None
    pos = own.index(level)
    rest = own[:pos] + own[pos + 1:]
    value = x._value
    if pos != len(rest):
        value = value.movedim(pos, len(rest))
    return _dispatch.batched.wrap(value, rest), 0


def _enter(x, dim, level):
    """``x`` batched at ``level`` along its dim ``dim`` (which leaves the sample)."""
    own = _levels_of(x)
    value = x._value if own else x
    d = _wrap_dim(dim, x.ndim) + len(own)
    if d != len(own):
        value = value.movedim(d, len(own))
    return _dispatch.batched.wrap(value, own + (level,))


def _exit(x, level, size):
    """``x`` with ``level``'s batch made its dim 0 (expanded when ``x`` does not vary)."""
    own = _levels_of(x)
    if level not in own:
        return x.unsqueeze(0).expand((size,) + tuple(x.shape))
    pos = own.index(level)
    rest = own[:pos] + own[pos + 1:]
    value = x._value
    if pos != len(rest):
        value = value.movedim(pos, len(rest))
    return _dispatch.batched.wrap(value, rest)


class _lowered:
    """The innermost vmap level not running (what runs inside it sees the unwrapped tensors)."""

    def __enter__(self):
        self.top = _dispatch.vmap.levels.pop()
        _dispatch.vmap.depth -= 1

    def __exit__(self, *exc):
        _dispatch.vmap.levels.append(self.top)
        _dispatch.vmap.depth += 1


class _level:
    """A fresh vmap level of ``size`` running; ``as`` gives its number."""

    def __init__(self, size, randomness):
        self.size, self.randomness = size, randomness

    def __enter__(self):
        state = _dispatch.vmap
        self.level = len(state.levels) + 1
        state.levels.append((self.level, self.size, self.randomness))
        state.depth += 1
        return self.level

    def __exit__(self, *exc):
        _dispatch.vmap.levels.pop()
        _dispatch.vmap.depth -= 1


def _check_rule_result(result):
    if not isinstance(result, tuple):
        raise RuntimeError(_TWO + f"Got a {type(result)} instead")
    if len(result) != 2:
        raise RuntimeError(_TWO + f"Got {len(result)} returns instead")
    return result


def _flat_out_dims(output, out_dims):
    """One out_dim per output (``output`` a tensor, or a tuple/list of them)."""
    many = isinstance(output, (tuple, list))
    n = len(output) if many else 1
    if out_dims is None or isinstance(out_dims, int):
        return [out_dims] * n
    if many and isinstance(out_dims, (tuple, list)) and len(out_dims) == n and all(
            d is None or isinstance(d, int) for d in out_dims):
        return list(out_dims)
    raise RuntimeError(
        "The autograd.Function's vmap staticmethod returned an incompatible (output, "
        f"out_dims) tuple. Expected out_dims={out_dims} to be compatible with the structure "
        "of `output`. " + _SEE)


def _rewrap(output, out_dims, level, originals):
    """The rule's output batched at ``level`` again (inputs returned as they are: the
    caller's own tensors, as PyTorch keeps their identity)."""
    many = isinstance(output, (tuple, list))
    outs = output if many else (output,)
    dims = _flat_out_dims(output, out_dims)
    result = []
    for o, d in zip(outs, dims):
        if not isinstance(o, Tensor):
            result.append(o)
        elif id(o) in originals:
            result.append(originals[id(o)])
        else:
            result.append(o if d is None else _enter(o, d, level))
    return type(output)(result) if many else result[0]


# ---------------------------------------------------------------------------- generated rule


def _vmapped_class(cls, in_dims, size, randomness):
    """The Function ``generate_vmap_rule`` applies to the unwrapped arguments: each method
    of ``cls`` run inside a level of ``size`` (see the module docstring)."""
    spec = {"cls": cls, "in_dims": in_dims, "size": size, "randomness": randomness,
            "out_dims": None}
    attrs = {
        "generate_vmap_rule": True,
        "out_dims": None,
        "forward": staticmethod(lambda *args: _forward(vmapped, spec, args)),
        "setup_context": staticmethod(lambda ctx, inputs, output:
                                      _setup_context(spec, ctx, inputs, output)),
        "backward": staticmethod(lambda ctx, *grads: _backward(spec, ctx, grads)),
        "jvp": staticmethod(lambda ctx, *tangents: _jvp(spec, ctx, tangents)),
        "__module__": cls.__module__,
    }
    vmapped = function.FunctionMeta("Vmapped" + cls.__name__, (Function,), attrs)
    return vmapped


def _logical(args, dims, level):
    return tuple(a if d is None or not isinstance(a, Tensor) else _enter(a, d, level)
                 for a, d in zip(args, dims))


def _forward(vmapped, spec, args):
    with _level(spec["size"], spec["randomness"]) as level:
        inputs = _logical(args, spec["in_dims"], level)
        output = spec["cls"].forward(*inputs)
        many = isinstance(output, tuple)
        outs, dims = [], []
        for o in (output if many else (output,)):
            which = next((i for i, x in enumerate(inputs) if x is o), None)
            if which is not None:  # an input returned as it is: keep its identity
                outs.append(args[which])
                dims.append(spec["in_dims"][which])
            elif isinstance(o, Tensor) and level in _levels_of(o):
                outs.append(_exit(o, level, spec["size"]))
                dims.append(0)
            else:
                outs.append(o)
                dims.append(None)
    spec["out_dims"] = vmapped.out_dims = tuple(dims) if many else dims[0]
    return tuple(outs) if many else outs[0]


def _setup_context(spec, ctx, inputs, output):
    """``cls.setup_context`` on the samples; what it saves or marks is kept unwrapped, each
    saved tensor with its batch dim (``ctx._vmap_saved``)."""
    many = isinstance(output, tuple)
    outs = output if many else (output,)
    out_dims = spec["out_dims"] if many else (spec["out_dims"],)
    with _level(spec["size"], spec["randomness"]) as level:
        logical_in = _logical(inputs, spec["in_dims"], level)
        logical_out = _logical(outs, out_dims, level)
        spec["cls"].setup_context(ctx, logical_in, logical_out if many else logical_out[0])
        known = {id(lg): ph for lg, ph in zip(logical_in + logical_out, tuple(inputs) + outs)}
        known_dims = {id(lg): d for lg, d in zip(logical_in + logical_out,
                                                 tuple(spec["in_dims"]) + tuple(out_dims))}

        def unwrap(tensors):
            phys, dims = [], []
            for t in tensors:
                if t is None or id(t) in known:
                    phys.append(None if t is None else known[id(t)])
                    dims.append(None if t is None else known_dims[id(t)])
                elif level in _levels_of(t):
                    phys.append(_unwrap(t, level)[0])
                    dims.append(0)
                else:
                    phys.append(t)
                    dims.append(None)
            return tuple(phys), tuple(dims)

        ctx.to_save, ctx._vmap_saved = unwrap(ctx.to_save)
        ctx._fw_saved, ctx._vmap_fw_saved = unwrap(ctx._fw_saved)
        ctx.dirty_tensors = unwrap(ctx.dirty_tensors)[0]
        ctx.non_differentiable = unwrap(ctx.non_differentiable)[0]


class _SampleCtx:
    """The ``ctx`` the mapped ``backward``/``jvp`` sees: the node's attributes, with the saved
    tensors batched at the running level."""

    def __init__(self, ctx, saved):
        object.__setattr__(self, "_ctx", ctx)
        object.__setattr__(self, "saved_tensors", saved)

    def __getattr__(self, name):
        return getattr(self._ctx, name)

    def __setattr__(self, name, value):
        setattr(self._ctx, name, value)


def _backward(spec, ctx, grads):
    cls = spec["cls"]
    many = isinstance(spec["out_dims"], tuple)
    out_dims = spec["out_dims"] if many else (spec["out_dims"],)
    with _level(spec["size"], spec["randomness"]) as level:
        saved = _logical(ctx.saved_tensors, ctx._vmap_saved, level)
        logical = _logical(grads, out_dims, level)
        result = cls._user_backward()(_SampleCtx(ctx, saved), *logical)
        one = not isinstance(result, tuple)
        result = (result,) if one else result
        out = []
        for g, d in zip(result, tuple(spec["in_dims"]) + (None,) * len(result)):
            if not isinstance(g, Tensor) or level not in _levels_of(g):
                out.append(g)
            elif d is None:  # an argument shared by the samples: their gradients summed
                out.append(_exit(g, level, spec["size"]).sum(0))
            else:
                out.append(_exit(g, level, spec["size"]).movedim(0, d))
    return out[0] if one else tuple(out)


def _jvp(spec, ctx, tangents):
    cls = spec["cls"]
    with _level(spec["size"], spec["randomness"]) as level:
        saved = _logical(ctx.saved_tensors, ctx._vmap_fw_saved, level)
        logical = _logical(tangents, spec["in_dims"], level)
        result = cls.jvp(_SampleCtx(ctx, saved), *logical)
        one = not isinstance(result, tuple)
        result = (result,) if one else result
        out_dims = spec["out_dims"] if isinstance(spec["out_dims"], tuple) else \
            (spec["out_dims"],)
        out = [t if not isinstance(t, Tensor) or d is None else _exit(t, level, spec["size"])
               for t, d in zip(result, out_dims)]
    return out[0] if one else tuple(out)


function._functorch_rule = functorch_apply
