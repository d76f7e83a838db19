"""Guards: what a recorded call depended on besides its arrays' values, as one generated check.

A recording is valid for a later call only if everything it read in Python is as it was:
the arguments' structure and Python values, each tensor's shape, dtype, strides and autograd
flags (among the arguments, and every tensor the function reaches: parameters, buffers,
captured tensors), each reached module's training flag and its lack of hooks, that every name
through which the function reached a model still holds it (a global, a closure cell, a
module's parameters, buffers and submodules, an optimizer's parameters), grad mode, the
default dtype, and the scalar globals the function's code names. ``make_guard`` walks one
call and writes that down as a Python function of ``(args, kwargs)`` (``Guard.check``): a
chain of comparisons against the recorded values, returning the call's tensor arguments (the
replay's ``L``) when all hold and None otherwise. A check costs a few attribute reads per
tensor: no hashing, nothing allocated but the list it returns.
"""
from __future__ import annotations

import numpy as np

from .._dtypes import get_default_dtype
from .._tensor import Tensor
from ..autograd.grad_mode import _state as _grad_state

__all__ = ["make_guard", "Guard"]

_SCALARS = (bool, int, float, str, type(None))
_MISSING = object()


class Guard:
    """A call's guard: ``check(args, kwargs)`` -> the tensor arguments, or None."""

    __slots__ = ("check", "source")

    def __init__(self, check, source):
        self.check, self.source = check, source


def make_guard(args, kwargs, reach):
    """The guard of a call with ``args`` and ``kwargs`` of a function that reaches ``reach``
    (``replay._reachable``); None when no recording of it could be replayed (a tensor not on
    NumPy, a module with hooks)."""
    w = _Writer()
    w.line(f"if _grad.grad is not {_grad_state.grad} or _default() is not "
           f"{w.const(get_default_dtype())}: return None")
    w.line(f"if len(args) != {len(args)} or tuple(kwargs) != {tuple(kwargs)!r}: return None")
    for i, a in enumerate(args):
        if not w.value(f"args[{i}]", a):
            return None
    for k, a in kwargs.items():
        if not w.value(f"kwargs[{k!r}]", a):
            return None
    modules, externals = reach
    for t in externals:
        if not w.tensor(w.const(t), t):
            return None
    for a in reach.arrays:  # (each held by a binding guarded below)
        w.array(w.const(a), a)
    for m in modules:
        if m._forward_hooks or m._forward_pre_hooks or getattr(m, "_backward_hooks", None) \
                or getattr(m, "_backward_pre_hooks", None):
            return None  # (hooks are Python the replay would skip)
        d = w.const(m.__dict__)  # (read directly: a missing name costs Module.__getattr__)
        w.line(f"if {d}.get('training') is not {m.training} or {d}.get('_forward_hooks') or "
               f"{d}.get('_forward_pre_hooks') or {d}.get('_backward_hooks') or "
               f"{d}.get('_backward_pre_hooks'): return None")
    for holder, key, obj in reach.bindings:  # (each name still holds what it held)
        h, o = w.const(holder), w.const(obj)
        if key is None:  # a closure cell
            w.line(f"if {h}.cell_contents is not {o}: return None")
        elif isinstance(holder, dict):
            w.line(f"if {h}.get({key!r}, _missing) is not {o}: return None")
        else:  # a list (an optimizer's parameters)
            w.line(f"if len({h}) <= {key} or {h}[{key}] is not {o}: return None")
    for globals_, names in reach.scalars:
        space = w.const(globals_)
        for name in names:
            v = globals_.get(name, _MISSING)
            if v is None:  # (``NoneType`` is no builtin name)
                w.line(f"if {space}.get({name!r}, _missing) is not None: return None")
            elif type(v) in _SCALARS:
                got = f"{space}.get({name!r}, _missing)"
                w.line(f"if type({got}) is not {type(v).__name__} or {got} != {v!r}: "
                       "return None")
    return w.finish()


class _Writer:
    """The lines of a check, its constants, and the sources of the call's tensor arguments."""

    def __init__(self):
        self.lines = []
        self.consts = []
        self.leaves = []
        self.n = 0

    def line(self, code):
        self.lines.append(code)

    def const(self, obj):
        self.consts.append(obj)
        return f"k{len(self.consts) - 1}"

    def local(self, source):
        name = f"v{self.n}"
        self.n += 1
        self.line(f"{name} = {source}")
        return name

    def value(self, source, v):
        """Lines checking the argument at ``source`` is like ``v``; False: not recordable."""
        t = type(v)
        if isinstance(v, Tensor):
            name = self.local(source)
            self.leaves.append(name)
            return self.tensor(name, v)
        if v is None:  # (``NoneType`` is no builtin name)
            self.line(f"if {source} is not None: return None")
            return True
        if t in _SCALARS:
            if t is float and v != v:
                return False  # (NaN equals nothing: no replay could ever match)
            self.line(f"if type({source}) is not {t.__name__} or {source} != {v!r}: return None")
            return True
        if t is tuple or t is list:
            name = self.local(source)
            self.line(f"if type({name}) is not {t.__name__} or len({name}) != {len(v)}: "
                      "return None")
            return all(self.value(f"{name}[{i}]", x) for i, x in enumerate(v))
        if t is dict:
            name = self.local(source)
            self.line(f"if type({name}) is not dict or tuple({name}) != {tuple(v)!r}: "
                      "return None")
            return all(self.value(f"{name}[{k!r}]", x) for k, x in v.items())
        # Anything else is the same object (held here, so no other can take its id); a NumPy
        # array too (its values are not guarded: Python may have read them), its shape and
        # dtype as well (a tensor may be made from it, anew by each replay)
        self.line(f"if {source} is not {self.const(v)}: return None")
        if t is np.ndarray:
            self.array(source, v)
        return True

    def array(self, name, a):
        """Lines checking the NumPy array at ``name`` is shaped, typed and laid out as ``a``."""
        self.line(f"if type({name}) is not _ndarray or {name}.shape != {a.shape!r} or "
                  f"{name}.dtype != {self.const(a.dtype)} or {name}.strides != "
                  f"{a.strides!r}: return None")
        return True

    def tensor(self, name, t):
        data = t._data
        if type(data) is not np.ndarray:
            return False
        d = self.local(f"{name}._data")
        self.line(f"if type({d}) is not _ndarray or {d}.shape != {data.shape!r} or "
                  f"{d}.dtype is not {self.const(data.dtype)} or {d}.strides != "
                  f"{data.strides!r}: return None")
        self.line(f"if {name}._rg is not {t._rg} or ({name}._grad_fn is None) is not "
                  f"{t._grad_fn is None} or ({name}._grad is None) is not {t._grad is None} "
                  f"or ({name}._base is None) is not {t._base is None}: return None")
        return True

    def finish(self):
        params = "".join(f", k{i}=k{i}" for i in range(len(self.consts)))
        body = "\n".join(f"    {line}" for line in self.lines)
        source = (f"def check(args, kwargs{params}):\n{body}\n"
                  f"    return [{', '.join(self.leaves)}]\n")
        namespace = {f"k{i}": c for i, c in enumerate(self.consts)}
        namespace.update(_grad=_grad_state, _default=get_default_dtype, _ndarray=np.ndarray,
                         _missing=_MISSING)
        exec(compile(source, "<compiled guard>", "exec"), namespace)  # (our generated code)
        return Guard(namespace["check"], source)
