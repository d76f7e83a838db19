"""ember's compiled mode, the backend ``torch.compile`` uses by default: record a call once,
replay it as generated straight-line Python.

A compiled function keeps one entry per *guard* (``guards.py``): what its recording depended
on besides the arrays' values (the arguments' shapes, dtypes, strides and autograd flags,
Python values among them, the same for every tensor it reaches: parameters, buffers,
captured tensors; the training flags of its modules, grad mode, the default dtype, and the
scalar globals its code names). A call no guard accepts runs eagerly under a ``Recorder``
(``recorder.py``); if the recording held, its lines become a Python function (``_generate``)
and later calls its guard accepts run that instead of the function: no Tensor or node is
made, only the recorded calls on the arrays. A recording that failed (a graph break:
``.item()``, a hook...) leaves its guard's calls running eagerly. After
``torch._dynamo.config.recompile_limit`` entries, new calls run eagerly with PyTorch's
warning.

Replays are eager's results bit for bit: the same calls on the same arrays in the same order.
"""
from __future__ import annotations

import textwrap
import time
import types
import warnings
import weakref
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .. import _dispatch, _recording
from .._tensor import Tensor
from ..autograd.graph import new_sequence_nr
from ..nn.module import Module
from ..optim.optimizer import Optimizer
from . import aot, config, graph_backward, inline, inplace
from .guards import _SCALARS, make_guard
from .recorder import Recorder

__all__ = ["record_and_replay"]


_RUNNERS = weakref.WeakSet()  # every compiled function, for ``reset``


def record_and_replay(fn, options):
    """The backend: ``fn`` compiled by recording and replaying (see the module docstring)."""
    return _Compiled(fn, bool(options.get("fullgraph")))


def reset():
    """Forget the recordings of every compiled function (``torch._dynamo.reset``)."""
    for runner in list(_RUNNERS):
        runner.entries.clear()
        runner.reasons.clear()
        runner.recordings.clear()
        runner._reach = runner._last = None


class _Compiled:
    """``fn`` with its entries: guard -> replay function, or None (runs eagerly)."""

    def __init__(self, fn, fullgraph):
        _RUNNERS.add(self)
        self.fn = fn
        self.fullgraph = fullgraph
        self.entries = {}
        self.reasons = {}  # guard -> why its calls run eagerly
        self.recordings = {}  # guard -> its Recording (for ``torch._dynamo.explain``)
        self._warned = False
        self._reach = None
        self._last = None  # (guard, replay) of the last replayed call
        self.replays = 0

    def __call__(self, *args, **kwargs):
        fn = self.fn
        if _dispatch.state.active or _recording.state.recorder is not None or config.disable:
            return fn(*args, **kwargs)  # (inside vmap, autocast, another recording: eagerly)
        last = self._last  # (the entry that served the last call is asked first)
        if last is not None:
            leaves = last[0].check(args, kwargs)
            if leaves is not None:
                self.replays += 1
                return last[1](leaves)
        for guard, replay in self.entries.items():
            leaves = guard.check(args, kwargs)
            if leaves is not None:
                if replay is None:
                    return fn(*args, **kwargs)
                self._last = guard, replay
                self.replays += 1
                return replay(leaves)
        if len(self.entries) >= config.recompile_limit:
            self._warn_limit()
            return fn(*args, **kwargs)
        self._reach = _reachable(fn)  # (anew: a name may hold another model since)
        guard = make_guard(args, kwargs, self._reach)
        if guard is None:  # (a tensor not on NumPy, a module with hooks: eagerly)
            return fn(*args, **kwargs)
        return self._record(guard, guard.check(args, kwargs), args, kwargs)

    def _record(self, guard, leaves, args, kwargs):
        modules, externals = self._reach
        arrays = (*self._reach.arrays, *_arrays_in((args, kwargs)))
        rec = Recorder(leaves, externals, self.fullgraph, arrays)
        start = time.perf_counter()
        first_seq = new_sequence_nr()
        backward = None
        rec.start()
        try:
            result = self.fn(*args, **kwargs)
            if rec.failed is None and not rec.backward_ran and aot.needs_graph(result):
                backward = aot.record_backward(rec, result, first_seq)
        finally:
            rec.stop()
        replay = None
        if rec.failed is None:
            graph_backward.check_grads(rec)
        if rec.failed is None:
            if backward is not None:
                rec.aot_outs = {id(t): k for k, t in enumerate(backward.outs)}
            reads = set()
            source = rec.result(result, reads)
            if source is not None and rec.failed is None:
                replay = _generate(rec, source, reads, getattr(self.fn, "__name__", "fn"),
                                   backward)
        self.entries[guard] = replay
        if replay is None:
            self.reasons[guard] = rec.failed
        self.recordings[guard] = Recording(rec.failed, rec.failed_at, len(rec.lines),
                                           time.perf_counter() - start, replay, guard)
        return result

    def _warn_limit(self):
        if not self._warned:
            self._warned = True
            name = getattr(self.fn, "__qualname__", repr(self.fn))
            warnings.warn(f"torch._dynamo hit config.recompile_limit ({config.recompile_limit})"
                          f"\n   function: {name!r}\nTo log all recompilation reasons, use "
                          "TORCH_LOGS=\"recompiles\".", stacklevel=3)


class Recording(NamedTuple):
    """What one recording made: why it failed (None: it replays) and where in the user's
    code, its number of lines, the seconds it took (the eager call included), the replay
    function (``.source``: its code) and the guard."""

    failed: str | None
    failed_at: list
    lines: int
    seconds: float
    replay: Callable | None
    guard: object


# --------------------------------------------------------------------------- reach


class _Reach(tuple):
    """``(modules, externals)`` a function reaches; ``scalars``: (globals, names) of the
    scalar globals read; ``bindings``: (holder, key, object) for every name through which it
    reached something (a global, a closure cell, a module's parameter, buffer or submodule,
    an optimizer's parameter), each guarded to hold that object still."""

    scalars = ()
    bindings = ()
    arrays = ()  # the NumPy arrays it reaches (a tensor may be made from one)


def _reachable(fn):
    """The modules and tensors ``fn`` reaches: through its bound object, its closure and the
    globals its code names, and so on through the functions (and methods) found there, the
    lists, tuples and dicts among them, to a depth of ``_DEPTH`` functions. Their
    parameters, buffers and tensors outlive a call and are read afresh by each replay
    (``externals``); the scalar globals each function's code names are guarded."""
    modules, tensors, scalars, bindings, arrays = [], [], [], [], []
    seen = set()

    def add(obj, depth):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, Module):
            for m in obj.modules():
                if id(m) not in seen or m is obj:
                    seen.add(id(m))
                    modules.append(m)
                    for kind in ("_parameters", "_buffers", "_modules"):
                        table = m.__dict__.get(kind, {})
                        bindings.extend((table, k, v) for k, v in table.items())
            for t in (*obj.parameters(), *obj.buffers()):
                add(t, depth)
        elif isinstance(obj, Optimizer):
            for group in obj.param_groups:
                params = group["params"]
                bindings.extend((params, k, t) for k, t in enumerate(params))
                for t in params:
                    add(t, depth)
        elif isinstance(obj, Tensor):
            tensors.append(obj)
        elif type(obj) is np.ndarray:
            arrays.append(obj)
        elif isinstance(obj, (list, tuple)) and len(obj) <= _ITEMS:
            for x in obj:
                add(x, depth)
        elif isinstance(obj, dict) and len(obj) <= _ITEMS:
            for x in obj.values():
                add(x, depth)
        elif depth < _DEPTH and callable(obj):
            function(obj, depth + 1)

    def function(f, depth):
        f = getattr(f, "_torchdynamo_orig_callable", f)  # (a compiled function's own)
        if isinstance(f, types.MethodType):
            add(f.__self__, depth)
            f = f.__func__
        code = getattr(f, "__code__", None)
        if code is None or (getattr(f, "__module__", None) or "").startswith(_LIBRARIES):
            return
        for cell in f.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            bindings.append((cell, None, value))
            add(value, depth)
        globals_ = f.__globals__
        names = [n for n in code.co_names if n in globals_]
        for n in names:
            value = globals_[n]
            if type(value) not in _SCALARS and not isinstance(value, types.ModuleType):
                bindings.append((globals_, n, value))
            add(value, depth)
        scalars.append((globals_, tuple(n for n in names if type(globals_[n]) in _SCALARS)))

    if isinstance(fn, Module):
        add(fn, 0)
    function(fn, 0)
    reach = _Reach((modules, tensors))
    reach.scalars = tuple(scalars)
    reach.bindings = tuple(bindings)
    reach.arrays = tuple(arrays)
    return reach


def _arrays_in(value, depth=0):
    """The NumPy arrays among ``value`` (arguments: in tuples, lists and dicts)."""
    if type(value) is np.ndarray:
        return [value]
    if depth > 3 or not isinstance(value, (tuple, list, dict)):
        return []
    items = value.values() if isinstance(value, dict) else value
    return [a for x in items for a in _arrays_in(x, depth + 1)]


_DEPTH = 4  # functions deep
_ITEMS = 64  # the longest list, tuple or dict looked into
_LIBRARIES = ("ember", "numpy", "torch")  # (their functions hold no user state)


# --------------------------------------------------------------------------- code


def _generate(rec, result, reads, name, backward=None):
    """The replay function of a recording: its lines (``_body``), then the result. With
    ``backward`` (a compiled forward whose results need their graph, ``aot.py``) the lines
    from ``rec.split`` on are the backward's: they become a function of their own, and the
    forward's replay gives its results a node that holds the arrays they read (the
    residuals)."""
    lines = rec.lines if backward is None else rec.lines[:rec.split]
    namespace = {f"c{k}": c for k, c in enumerate(rec.consts)}
    params = "".join(f", c{k}=c{k}" for k in range(len(rec.consts)))
    tail = []
    keep = set(reads)
    if backward is not None:
        back = rec.lines[rec.split:]
        written = {s for line in back for s in line.writes}
        residuals = sorted({s for line in back for s in line.reads if s not in written},
                           key=lambda s: int(s[1:]))
        grads = [None if g is None else rec.slot(g) for g in backward.captured]
        if any(g is None and c is not None for g, c in zip(grads, backward.captured)):
            rec.fail("a captured gradient is an array the recording did not make")
            return None
        out_reads = {g for g in grads if g is not None}
        back_fn = _compile(f"def backward(R, G{params}):\n"
                           + (f"    {', '.join(residuals)}, = R\n" if residuals else "")
                           + _body(back, out_reads | set(residuals), rec)
                           + f"\n    return [{', '.join(g or 'None' for g in grads)}]\n",
                           namespace, f"<compiled {name} backward>", "backward")
        targets = ", ".join(f"({kind!r}, {src})" for kind, src in backward.targets)
        metas = tuple((t._data.shape, t._data.dtype) for t in backward.outs)
        namespace.update(_make=aot.make_node, _back=back_fn, _metas=metas)
        tail.append(f"n = _make(({targets}{',' if backward.targets else ''}), _back, "
                    f"({', '.join(residuals)}{',' if residuals else ''}), _metas)")
        keep |= set(residuals)
    source = (f"def replay(L{params}):\n" + _body(lines, keep, rec)
              + "".join(f"\n    {t}" for t in tail) + f"\n    return {result}\n")
    replay = _compile(source, namespace, f"<compiled {name}>", "replay")
    replay.source = source
    return replay


def _body(lines, keep, rec):
    """``lines`` as a function body, each slot not in ``keep`` deleted after its last use
    (memory falls as in eager; a small array is left to the function's end: a ``del`` costs
    more than it frees); an operation whose operand dies on its line done in place
    (``inplace.py``), its result named as the operand from there on."""
    last = {}
    for k, line in enumerate(lines):
        for s in line.reads:
            last[s] = k
    in_place = inplace.plan(lines, keep, last, rec.roots, rec.escaped)
    names = {}  # slot -> the name it is replayed under (an operand's, reused in place)
    body = []
    for k, (code, read, written, _) in enumerate(lines):
        dead = {s for s in (*read, *written) if s not in keep and last.get(s, -1) <= k
                and not rec.small(s)}
        if k in in_place:  # ``s9 = s4 + s8`` as ``s4 += s8``, s9 read as s4 from here on
            operand, target = lines[k].inplace[0], written[0]
            body.append(inline.renamed(in_place[k], names) if names.keys() & set(read) else
                        in_place[k])
            if target in keep:  # (a result or a residual: named in code made elsewhere)
                body.append(f"{target} = {names.get(operand, operand)}")
            else:
                names[target] = names.get(operand, operand)
                dead.discard(operand)  # (it lives on as the target)
        else:
            body.append(inline.renamed(code, names) if names.keys() & set(read) else code)
        if dead:
            body.append("del " + ", ".join(sorted({names.get(s, s) for s in dead},
                                                  key=lambda s: int(s[1:]))))
    return textwrap.indent("\n".join(body) or "pass", "    ")


def _compile(source, namespace, filename, name):
    exec(compile(source, filename, "exec"), namespace)  # (our own generated code)
    return namespace[name]
