"""Compiled mode's recorder: one eager call watched, written down as straight-line Python.

While a ``Recorder`` is active (``ember._recording.state.recorder``), the call runs eagerly as
always, and every array-level computation it makes is reported here and written down as one
line of Python over *slots* (local variables ``s0, s1, ...`` holding raw arrays):

- each op's forward, ``s7 = c3(c0, s2, s5, c4)`` (``c0`` the array namespace the op ran on,
  ``c3`` its forward, ``c4`` a parameter), with the casts its type promotion made;
- each node's backward: its rules' calls where ``OpNode.apply``'s fast path served it
  (``_rules``), else the node's own ``apply`` on the slots' arrays (``runners.py``); the
  engine's sums as the NumPy operation (``plus``), its ``.grad`` accumulation as a call;
- checks on values ember's own code makes (``expect``), made again by each replay;
- new arrays from Python values (``constant``, ``fixed``), random draws and calls kept whole
  (``opaque``: an optimizer's ``step`` and ``zero_grad``), replayed as calls.

Because the replay makes the same calls on the same arrays in the same order, its results are
eager's bit for bit. An array enters a slot only by a recorded line or by a *load* of a tensor
the call was given or can reach (its arguments, the parameters and buffers of its modules,
the tensors of its closure: ``leaves`` and ``externals``): ``s2 = L[0]._data``. Anything else
stops the recording (``fail``) and the function runs eagerly from then on: a tensor made
outside the recorded calls, a tensor's value read by Python (``.item()``), a hook, a
reduced-precision op, a recorded graph (``create_graph``). The call being recorded runs on,
eagerly and correctly, either way. A compiled forward whose results need their graph has its
backward recorded after it (``aot.py``).
"""
from __future__ import annotations

import math
import os
import traceback
from typing import NamedTuple

import numpy as np

from .. import _device, _dispatch, _dtypes, _recording
from .._tensor import Tensor
from ..autograd import node as _node
from ..autograd import views as _views
from ..autograd.graph import new_sequence_nr
from ..autograd.node import OpNode
from ..ops import _blocks
from . import aot as _aot
from . import graph_backward as _graph
from . import inline as _inline
from . import inplace as _inplace
from . import runners as _runners
from .exc import Unsupported

__all__ = ["Recorder"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LITERALS = (type(None), bool, int, str)
_SMALL = 16384  # bytes: a slot this small is not deleted after its last use (see replay.py)
# what a result may hold as it is: values that hold no tensor (a dtype, a device, a scalar)
_PLAIN_VALUES = (float, complex, np.generic, np.dtype, _dtypes.dtype, _device.device, type, slice,
                 range, type(Ellipsis))


class Line(NamedTuple):
    """One recorded line: its code, the slots it reads and writes, and the in-place form it
    may take (``inplace.py``: ``(operand slot, code)``, or None)."""

    code: str
    reads: object
    writes: tuple = ()
    inplace: tuple | None = None


class Recorder:
    """The lines of one recorded call; see the module docstring. ``leaves``: the tensors
    among the call's arguments (``L[i]`` in the replay); ``externals``: tensors it may read
    that outlive it (parameters, buffers, captured tensors), held as constants."""

    def __init__(self, leaves, externals, fullgraph=False, arrays=()):
        self.lines = []  # Line
        self.roots = {}  # slot -> id of the owner of its array's memory (``inplace.py``)
        self.escaped = set()  # those owners that something outside the slots holds
        self.fresh = set()  # the slots whose arrays only they hold
        self.consts = []
        self._const_at = {}
        self._slot_of = {}  # id(array) -> slot name
        self._keep = []  # every array given a slot (so that ids stay unique)
        self._leaf_of = {id(t): i for i, t in enumerate(leaves)}
        self._external = {id(t) for t in externals}
        # the arrays of those tensors, for a raw array read from one (``target._data``)
        self._owner = {id(t._data): t for t in (*leaves, *externals)}
        # NumPy arrays a tensor may be made from: among the arguments, or reached through a
        # global or closure (held, and guarded to be the same; each replay reads them as they
        # are then)
        self._array_src = {id(a): self._const(a) for a in arrays}
        # the ``.grad`` tensors of those tensors: id -> the source that reads it in a replay,
        # and their arrays (id -> the grad tensor), for a raw array read from one
        self._grad_src = {}
        self._grad_owner = {}
        for t in (*leaves, *externals):
            self.note_grad(t)
        self.leaves = leaves  # (held: their ids stay unique while recording)
        self._externals = externals
        self.fullgraph = fullgraph
        self.failed = None
        self.failed_at = []
        self._where = ""  # (what was being recorded, for the reason of a failure)
        self.backward_ran = False
        self.graph_seq = None  # the first node number of a backward recording its graph
        self._loads = set()  # the slots loaded from a tensor that outlives the call
        self._detached = {}  # id -> a tensor the call made by ``detach()`` (held)
        self._holders = {}  # id -> a dict an op's forward fills (its constant holds it)
        self.graph_grads = []  # the tensors whose ``.grad`` such a backward set
        self.split = None  # where the lines of a compiled forward's backward begin (aot.py)
        self.aot_outs = {}  # id(result tensor) -> its output number in that backward's node
        self._n_seeds = 0
        self._paused = 0
        self._inline_memo = {}  # (inline.py: calls alike but for their slots)

    # ------------------------------------------------------------------ starting, stopping
    def start(self):
        _recording.state.recorder = self
        _dispatch.refresh()  # ops take their general path, which reports the forward

    def stop(self):
        if _recording.state.recorder is self:
            _recording.state.recorder = None
            _dispatch.refresh()

    def fail(self, reason):
        """Stop recording: the call runs on eagerly and is not replayed."""
        if self.failed is None:
            self.failed = reason + self._where
            self.failed_at = [f for f in traceback.extract_stack()[:-1]
                              if not f.filename.startswith(_PACKAGE)]  # (the user's frames)
        self.stop()
        if self.fullgraph:
            raise Unsupported(reason)

    # ------------------------------------------------------------------ names
    def _const(self, obj):
        k = self._const_at.get(id(obj))
        if k is None:
            k = self._const_at[id(obj)] = len(self.consts)
            self.consts.append(obj)
        return f"c{k}"

    def _new_slot(self, array):
        name = f"s{len(self._keep)}"
        self._keep.append(array)
        self._slot_of[id(array)] = name
        self.roots[name] = id(_inplace.root(array))
        return name

    def _emit(self, code, reads, writes=(), inplace=None):
        self.lines.append(Line(code, reads, writes, inplace))

    def _assign(self, call, reads, out):
        """The line ``target = call`` for ``out``, with its in-place form if it may take one."""
        target, written = self._targets(out)
        if target is None:
            self._emit(_inline.statement(None, call), reads)
            return
        inplace = None
        if len(written) == 1:
            inplace = _inplace.candidate(call, out, self.fresh,
                                         lambda slot: self._keep[int(slot[1:])], self._lookup)
            if _inplace.is_fresh(call, out, self._lookup):
                self.fresh.add(written[0])
        self._emit(_inline.statement(target, call), reads, written, inplace)

    def _escape(self, slots):
        """``slots``' arrays are held by something outside the slots from now on."""
        self.escaped.update(self.roots[s] for s in slots if s in self.roots)

    # ------------------------------------------------------------------ references
    def tensor_data(self, t, reads):
        """The slot of ``t._data``, loading it when ``t`` is a leaf or an external; None
        (after ``fail``) for a tensor from outside the recorded calls."""
        data = t._data
        name = self._slot_of.get(id(data))
        if name is None:
            i = self._leaf_of.get(id(t))
            if i is not None:
                source = f"L[{i}]"
            elif id(t) in self._external:
                source = self._const(t)
            elif id(t) in self._grad_src:
                source = self._grad_src[id(t)]
            else:
                owner = self._array_owner(data)
                if owner is not None:  # (``x.detach()``: x's array)
                    return self.tensor_data(owner, reads)
                self.fail("a tensor made outside the recorded calls is used (a creation "
                          "function or a conversion ember does not record yet)")
                return None
            if type(data) is not np.ndarray:
                self.fail("only NumPy-backed tensors are recorded")
                return None
            name = self._new_slot(data)
            self._emit(f"{name} = {source}._data", (), (name,))
            self._escape((name,))  # (a tensor's storage)
            self._loads.add(name)
        if name[0] == "s":  # (not a ``fixed`` array, a constant)
            reads.add(name)
        return name

    def detached(self, tensor):
        """``tensor`` was made by ``detach()`` in the call (it shares its source's array)."""
        self._detached[id(tensor)] = tensor

    def _detached_from(self, t):
        """The leaf or external (or its ``.grad``) whose array ``t``, a tensor the call made
        by ``detach()``, shares; None for another tensor."""
        return self._array_owner(t._data) if id(t) in self._detached else None

    def _array_owner(self, array):
        """The leaf or external (or its ``.grad``) whose array ``array`` is; None if none."""
        owner = self._owner.get(id(array))
        if owner is None:
            owner = self._grad_owner.get(id(array))
        return owner if owner is not None and owner._data is array else None

    def made_here(self, tensor):
        """Whether ``tensor`` was made in the call: its array made by a recorded line (not
        loaded from a tensor that outlives the call), or it was ``detach()``-ed from one."""
        name = self._slot_of.get(id(tensor._data))
        if self.source(tensor) is not None or id(tensor) in self._grad_src:
            return False
        if name is not None and name not in self._loads and name[:1] == "s":
            return True
        return self._detached_from(tensor) is not None

    def _tensor_object(self, t):
        source = self.source(t)
        if source is not None:
            return source
        self.fail("a tensor made inside the call is handed to the autograd engine's "
                  "accumulation (a new leaf)")
        return None

    def value(self, v, reads):
        """Python source for ``v`` in a recorded line: a slot for an array the recording
        made, a literal, or a constant; None after ``fail``."""
        t = type(v)
        if t is np.ndarray:
            name = self._slot_of.get(id(v))
            if name is not None:
                if name[0] == "s":  # (not a ``fixed`` array, a constant)
                    reads.add(name)
                return name
            owner = self._array_owner(v)
            if owner is not None:
                return self.tensor_data(owner, reads)
            name = self._holder_entry(v)
            if name is not None:
                reads.add(name)
                return name
            self.fail("an array made outside the recorded calls is used")
            return None
        if t in _LITERALS or t is float and math.isfinite(v):
            return repr(v)
        if t is tuple or t is list:
            items = [self.value(x, reads) for x in v]
            if any(x is None for x in items):
                return None
            inner = ", ".join(items) + ("," if t is tuple and len(items) == 1 else "")
            return f"({inner})" if t is tuple else f"[{inner}]"
        if isinstance(v, Tensor):
            return self._tensor_object(v)
        if isinstance(v, (np.ndarray, np.generic)):  # (a NumPy scalar or array subclass:
            # it may hold values computed from the tensors, which the replay would not redo)
            self.fail(f"a NumPy {t.__name__} made outside the recorded calls is used")
            return None
        if isinstance(v, np.random.Generator):  # (``manual_seed`` replaces it: stale later)
            self.fail("a random draw from NumPy's generator is made (not recorded yet)")
            return None
        # (a dict is an op's holder, which its forward fills for its rules: ``_between_rules``)
        if isinstance(v, (tuple, list)) and _holds_arrays(v):
            self.fail(f"a {t.__name__} of arrays is handed on (not recorded yet)")
            return None
        if t is dict:
            self._holders[id(v)] = v
        return self._const(v)  # a dtype, a NumPy scalar, a function, a generator...

    def _holder_entry(self, array):
        """A slot for ``array`` read from the holder an op's recorded forward filled with it
        (max pooling's indices, which a rule recording its graph hands to an op): the
        replay's forward fills the same holder anew. None if no holder has it."""
        for holder in self._holders.values():
            for key, x in holder.items():
                if x is array and type(key) is str:
                    name = self._new_slot(array)
                    self._emit(f"{name} = {self._const(holder)}[{key!r}]", set(), (name,))
                    self._escape((name,))  # (the holder's)
                    return name
        return None

    def _targets(self, out):
        """Slots for what a recorded line returns: an array, or a tuple or list of them
        (None where an item is None); returns ``(source, written)``."""
        if out is None or type(out) in (tuple, list) and not out:
            return None, ()
        if type(out) in (tuple, list):
            names = ["_" if o is None else self._new_slot(o) for o in out]
            return (", ".join(names) + ("," if len(names) == 1 else "")), tuple(
                n for n in names if n != "_")
        name = self._new_slot(out)
        return name, (name,)

    def _call(self, fn, args, block=False):
        """Source of ``fn(*args)`` (``args``: sources): written out where ``fn`` is one
        expression (``inline.py``), else a call of it as a constant. ``block``: the source
        will be a line's whole value (``_assign``): a function of several statements may be
        written out too, its statements going first."""
        return (_inline.expression(fn, args, self._const, self._lookup, self._inline_memo,
                                   block)
                or f"{self._const(fn)}({', '.join(args)})")

    def _lookup(self, name):
        """The object a constant's name (``c3``) stands for, or the array a slot's (``s3``)
        held when recorded; None for another name."""
        if name[1:].isdigit():
            k = int(name[1:])
            if name[0] == "c" and k < len(self.consts):
                return self.consts[k]
            if name[0] == "s" and k < len(self._keep) and f"s{k}" in self.roots:
                return self._keep[k]
        return None

    def _line(self, fn, args, reads, out):
        self._assign(self._call(fn, args, True), reads, out)

    # ------------------------------------------------------------------ what is reported
    def forward(self, op, xp, args, given, arrays, n_in, raw, out):
        """An op's forward ran on ``xp``: ``given`` its inputs as raw arrays (or numbers),
        ``arrays`` after type promotion, ``raw`` what the forward returned, ``out`` that made
        arrays."""
        if self._paused or self.failed is not None:
            return
        self._where = f" (in {op.name}'s forward)"
        reads = set()
        refs = []
        for i in range(n_in):
            a = args[i]
            if isinstance(a, Tensor):
                ref = self.tensor_data(a, reads)
            else:
                ref = self.value(given[i], reads)
            if ref is None:
                return
            if arrays[i] is not given[i]:  # cast by the type promotion
                cast = self._new_slot(arrays[i])
                self._emit(f"{cast} = {ref}.astype({self._const(arrays[i].dtype)})",
                           {ref}, (cast,))
                reads.add(cast)
                ref = cast
            refs.append(ref)
        for p in arrays[n_in:]:
            ref = self.value(p, reads)
            if ref is None and p is not None:
                return
            refs.append(ref)
        forward = _blocks.direct(op.forward, arrays)  # (a small blockwise kernel: itself)
        self._line(forward, [self._const(xp), *refs], reads, raw)
        if out is not raw:  # NumPy scalars made 0-d arrays, as the op call makes them
            if type(raw) is tuple:
                names = [self._slot_of[id(o)] for o in raw]
                src = "(" + ", ".join(names) + ",)"
                self._line(_as_arrays, [src], set(names), out)
            else:
                src = self._slot_of[id(raw)]
                self._line(np.asarray, [src], {src}, out)
        self._where = ""

    def node_apply(self, node, buf, grads_in):
        """The engine ran ``node``'s backward on ``buf`` and got ``grads_in``."""
        if self._paused or self.failed is not None:
            return
        if type(node) in (_views.CopySlices, _views.AsStridedBackward0):
            self._view_node(node, buf, grads_in)
            return
        if not isinstance(node, OpNode) or node._packed is not None:
            self.fail(f"the backward of {type(node).__name__} is not recorded (a custom "
                      "Function, or saved-tensor hooks)")
            return
        self._where = f" (in {type(node).__name__})"
        if _plain_backward(node, buf):
            self._rules(node, buf[0], grads_in)
        else:
            reads = set()
            refs = [self.value(list(buf), reads), self.value(node._ans, reads),
                    self.value(list(node._saved), reads)]
            if None in refs:
                return
            self._line(_runners.NodeRunner(node), refs, reads, list(grads_in))
        self._where = ""

    def _view_node(self, node, buf, grads_in):
        """A write through a view's nodes (``autograd/views.py``): ``CopySlices`` runs its
        in-place op's node inside (whose saved arrays the replay hands it), ``AsStrided``
        saves none. Their view functions must hold no array (a slice's bounds, not indices
        read from a tensor)."""
        inner = getattr(node, "_inner", None)
        if not _runners.holds_no_array(node._view_fn) or inner is not None and (
                not isinstance(inner, OpNode) or inner._packed is not None):
            self.fail(f"the backward of {type(node).__name__} is not recorded (its view or "
                      "its in-place op)")
            return
        reads = set()
        refs = [self.value(list(buf), reads)]
        if inner is not None:
            refs += [self.value(inner._ans, reads), self.value(list(inner._saved), reads)]
        if None in refs:
            return
        self._line(_runners.ViewNodeRunner(node), refs, reads, list(grads_in))

    def expect(self, fn, args, value):
        """``fn(*args)`` gave ``value``, on which the caller decided: the replay checks it."""
        if self._paused or self.failed is not None:
            return
        if type(value) not in _LITERALS:
            self.fail(f"{fn.__name__} gives a {type(value).__name__} (not recorded)")
            return
        reads = set()
        refs = [self.value(a, reads) for a in args]
        if None not in refs:
            self._line(_expected, [self._const(fn), repr(value), *refs], reads, None)

    def constant(self, array):
        """A new array made from Python values only: each replay copies it as it is now."""
        if self._paused or self.failed is not None:
            return
        if type(array) is not np.ndarray:
            self.fail("a tensor is made on a device ember does not record")
            return
        name = self._new_slot(array)
        self._emit(f"{name} = {self._const(array.copy())}.copy()", set(), (name,))
        if array.ndim:
            self.fresh.add(name)  # (a new array each replay, held by the slot alone)

    def from_array(self, source, array):
        """A tensor's array made from the NumPy array ``source``: a copy (``array`` another
        array) or ``source`` itself; made again by each replay from where ``source`` was."""
        if self._paused or self.failed is not None:
            return
        where = self._array_src.get(id(source))
        if where is None:
            self.fail("a tensor is made from a NumPy array that is neither an argument nor "
                      "reached through a global or closure (its values may differ in another "
                      "call)")
            return
        name = self._new_slot(array)
        if array is source:  # (``from_numpy``: the caller's memory, which writes show in)
            self._emit(f"{name} = {where}", set(), (name,))
            self._escape((name,))
        else:
            self._emit(f"{name} = {self._const(np.array)}({where}, "
                       f"dtype={self._const(array.dtype)})", set(), (name,))
            if array.ndim:
                self.fresh.add(name)

    def fixed(self, array):
        """An array made from Python values only that nothing writes: the replays read it."""
        if self._paused or self.failed is not None or type(array) is not np.ndarray:
            return
        self._keep.append(array)
        self._slot_of[id(array)] = self._const(array)

    def _rules(self, node, g, grads_in):
        """The lines of ``OpNode.apply``'s fast path for ``node``: each needed edge's rule on
        the raw arrays, its result fitted to the input (``node._fitted``) where it must be.
        (Whether it must is found by calling the rule again here: rules are functions of
        their arguments, and a fit-less line saves a call per edge in every replay.)"""
        reads = set()
        head = [self.value(g, reads), self.value(node._ans, reads)]
        saved = [self.value(v, reads) for v in node._saved]
        if None in head or any(r is None and v is not None for r, v in zip(saved, node._saved)):
            return
        rules = node._op.rules
        xp = self._const(_node._NUMPY)
        n = len(node.next_functions)
        for k, gi in enumerate(grads_in):
            if gi is None:
                continue
            meta = node._meta[k]
            if node._arity > 0:
                raw = rules[k](_node._NUMPY, g, node._ans, *node._saved)
                rule, args = rules[k], [xp, *head, *saved]
            else:  # (variadic: the one rule, told which input)
                inputs = node._saved[:n]
                raw = rules(_node._NUMPY, g, node._ans, k, inputs, *node._saved[n:])
                rule, args = rules, [xp, *head, str(k), f"[{', '.join(saved[:n])}]", *saved[n:]]
            if type(raw) is np.ndarray and raw.shape == meta[0] and raw.dtype is meta[1]:
                if raw is g and gi is g:  # (the rule hands the gradient on: no line)
                    continue
                self._line(rule, args, reads, gi)
            else:
                self._line(_node._fitted, [self._call(rule, args), self._const(meta)], reads, gi)

    def plus(self, engine_plus, a, b, own):
        """The engine's sum of two gradients arriving at one slot (``engine._plus``): its
        line is the NumPy operation ``_plus`` chose for these arrays (``a += b``, or ``a + b``
        and a 0-d array for a NumPy scalar), not a call of it."""
        out = engine_plus(a, b, own)
        if self._paused or self.failed is not None:
            return out
        reads = set()
        ra, rb = self.value(a, reads), self.value(b, reads)
        if ra is None or rb is None:
            return out
        if out is a:  # (summed in place)
            self._emit(f"{ra} += {rb}", reads)
            target, written = self._targets(out)
            self._emit(f"{target} = {ra}", {ra}, written)
        elif type(a) is np.ndarray and type(b) is np.ndarray and a.ndim and b.ndim:
            self._assign(f"{ra} + {rb}", reads, out)
        else:
            self._line(engine_plus, [ra, rb, repr(bool(own))], reads, out)
        return out

    def graph_backward(self):
        """What a backward that records its graph (``create_graph=True``) reports to: its
        nodes' computations are recorded as ops (``graph_backward.py``)."""
        if self.graph_seq is None:
            self.graph_seq = new_sequence_nr()
        return _graph.GraphBackward(self)

    def seed_slot(self, array):
        """A gradient the recorded backward of a compiled forward is given (``aot.py``)."""
        name = self._new_slot(array)
        self._emit(f"{name} = G[{self._n_seeds}]", set(), (name,))
        self._escape((name,))  # (the caller's)
        self._n_seeds += 1
        return name

    def seed(self, array):
        """The implicit ``1.0`` a backward starts from: made anew by each replay."""
        if self._paused or self.failed is not None:
            return
        self.constant(array)

    def opaque(self, fn, args):
        """``fn(*args)`` run and recorded as one call (nothing inside it recorded)."""
        if self._paused or self.failed is not None:
            return fn(*args)
        reads = set()
        refs = [self.value(a, reads) for a in args]
        self._paused += 1
        try:
            out = fn(*args)
        finally:
            self._paused -= 1
        if _recording.state.recorder is self and None not in refs:
            self._escape(reads)  # (it may keep what it is given: ``.grad`` does)
            self._line(fn, refs, reads, out if type(out) in (np.ndarray, tuple, list) else None)
        return out

    def call(self, fn, args):
        """``fn(*args)``, which ran eagerly and returns nothing, made by the replay too."""
        if self._paused or self.failed is not None:
            return
        reads = set()
        refs = [self.value(a, reads) for a in args]
        if None not in refs:
            self._escape(reads)  # (it may keep what it is given: ``.grad`` does)
            self._line(fn, refs, reads, None)

    def source(self, tensor):
        i = self._leaf_of.get(id(tensor))
        if i is not None:
            return f"L[{i}]"
        return self._const(tensor) if id(tensor) in self._external else None

    def slot(self, array):
        """The slot holding ``array``, or None."""
        return self._slot_of.get(id(array))

    def small(self, slot):
        """Whether ``slot``'s array was small when recorded (not worth a ``del``)."""
        array = self._keep[int(slot[1:])]
        return type(array) is np.ndarray and array.nbytes <= _SMALL

    def note_grad(self, tensor):
        grad = tensor._grad
        if grad is not None:
            source = self.source(tensor)
            if source is not None:
                self._grad_src[id(grad)] = f"{source}._grad"
                self._grad_owner[id(grad._data)] = grad
                self._keep.append(grad)

    def accumulate(self, engine_accumulate, var, g, create_graph, own):
        """The engine's ``AccumulateGrad`` into ``var.grad``, recorded as its call."""
        if not self._paused and self.failed is None and self.made_here(var):
            self._inner_accumulate(engine_accumulate, var, g, create_graph, own)
            return
        self.opaque(engine_accumulate, (var, g, create_graph, own))
        self.note_grad(var)

    def _inner_accumulate(self, engine_accumulate, var, g, create_graph, own):
        """``AccumulateGrad`` into a leaf made inside the call (``x.detach().requires_grad_()``),
        which no replay has: only its arrays are recorded. Its ``.grad`` becomes ``g``'s
        array, a copy of it (a recorded line) or a sum with a ``.grad`` holding a graph (an
        op, recorded as it runs); a sum into ``.grad``'s array in place would change a slot
        behind the recorded lines' back, so it stops the recording."""
        grad = var._grad
        if var._rg and grad is not None and grad._grad_fn is None and not grad._rg:
            self.fail("a gradient is accumulated in place into the .grad of a tensor made "
                      "inside the call (not recorded)")
            return
        engine_accumulate(var, g, create_graph, own)
        new = var._grad
        if grad is None and new is not None and new._data is not g and type(g) is np.ndarray:
            reads = set()
            ref = self.value(g, reads)
            if ref is not None:
                self._assign(f"{ref}.copy()", reads, new._data)

    def set_grad(self, tensor, value, setter):
        """``tensor.grad = value``, recorded as the setter's call."""
        self.opaque(setter, (tensor, value))
        self.note_grad(tensor)

    def requires_grad_set(self, tensor):
        """``tensor.requires_grad_()`` changed its flag. A replay makes no tensors, so this
        is recorded by what followed eagerly (the graph built on it) only for a tensor the
        call made (``made_here``: ``x.detach().requires_grad_()``, a gradient penalty's
        interpolated input); any other tensor (it may outlive the call) stops the recording."""
        if self._paused or self.failed is not None:
            return
        if tensor._base is not None or not self.made_here(tensor):
            self.fail("requires_grad_() changes a tensor that outlives the call (not recorded)")

    def wrote(self, tensor):
        """``tensor`` was written in place (``Tensor._assign``): its version goes up in the
        replay too when it outlives the call (an argument or an external)."""
        if self._paused or self.failed is not None:
            return
        source = self.source(tensor)
        if source is not None:
            self._emit(f"{source}._vc[0] += 1", set())

    # ------------------------------------------------------------------ the result
    def result(self, value, reads):
        """Python source rebuilding the call's result in the replay."""
        self._where = ""
        if isinstance(value, Tensor):
            source = self.source(value) or self._grad_src.get(id(value))
            if source is not None:
                return source
            name = self._slot_of.get(id(value._data))
            if name is None:
                self.fail("the result is a tensor made outside the recorded calls")
                return None
            if id(value) in self.aot_outs:
                reads.add(name)
                return f"{self._const(_aot.result_tensor)}({name}, n, {self.aot_outs[id(value)]})"
            if value.requires_grad and value._grad_fn is None and value._base is None:
                self.fail("the result is a leaf made inside the call that requires grad "
                          "(not rebuilt)")
                return None
            if value.requires_grad and self.graph_seq is not None:
                rebuild = _graph.graph_result(self, value)
                if rebuild is None:
                    return None
                reads.add(name)
                return f"{self._const(rebuild)}({name})"
            if value.requires_grad:
                if not self.backward_ran:
                    self.fail("the result needs its graph after the call (a compiled "
                              "forward whose backward runs outside it is not compiled yet)")
                    return None
                reads.add(name)
                return f"{self._const(_consumed)}({name})"
            reads.add(name)
            return f"{self._const(_plain)}({name})"
        t = type(value)
        if isinstance(value, (tuple, list)):
            items = [self.result(x, reads) for x in value]
            if None in items:
                return None
            inner = ", ".join(items) + ("," if len(items) == 1 else "")
            if t is list:
                return f"[{inner}]"
            if t is tuple:
                return f"({inner})"
            if all(type(x) in _LITERALS for x in value):
                return self._const(value)  # (a Size, a tuple of Python values)
            make = f"{self._const(t)}._make" if hasattr(t, "_make") else self._const(t)
            return f"{make}(({inner}))"  # (a named tuple, torch.return_types.max...)
        if t is dict:
            items = {k: self.result(x, reads) for k, x in value.items()}
            if None in items.values():
                return None
            return "{" + ", ".join(f"{self._const(k)}: {v}" for k, v in items.items()) + "}"
        if t in _LITERALS or t is float or isinstance(value, _PLAIN_VALUES):
            return self.value(value, reads)
        self.fail(f"the result holds a {t.__name__} (only tensors, Python values and "
                  "containers of them are rebuilt)")
        return None


def _holds_arrays(v):
    items = v.values() if isinstance(v, dict) else v
    return any(isinstance(x, (np.ndarray, Tensor)) or isinstance(x, (tuple, list, dict))
               and _holds_arrays(x) for x in items)


def _plain_backward(node, buf):
    """Whether ``node.apply`` took its fast path for ``buf`` (see there): a one-output node
    of fixed or variadic inputs, a real NumPy gradient, nothing packed."""
    g = buf[0]
    return (node._arity != 0 and type(g) is np.ndarray and type(g.dtype) in _node._PLAIN
            and node._saved is not None and node._packed is None
            and (node._arity > 0 or all(a is None or type(a.dtype) in _node._PLAIN
                                        for a in node._saved[:len(node.next_functions)])))


def _expected(fn, value, *args):
    """A replay's check of a value a recorded call's Python depended on (``expect``)."""
    if fn(*args) != value:
        raise RuntimeError(
            f"torch.compile: {fn.__name__}, on which this call's recording depends, gives "
            "another answer for these tensors' values (an index out of range?): run the "
            "function uncompiled to get PyTorch's error for them")


def _as_arrays(outs):
    """A multi-output op's results with NumPy scalars made 0-d arrays (as ``Op`` makes them)."""
    return tuple(np.asarray(o) if isinstance(o, np.generic) else o for o in outs)


def _plain(array):
    return Tensor._make(array, None, False)


def _consumed(array):
    """A result whose graph the call's own backward has used and freed: a second backward
    raises PyTorch's error, as it would eagerly."""
    return Tensor._make(array, _aot.CompiledFunctionBackward((), 1, None, None, ()), True)


# While a recorder is active, every op call takes the general path (``Op._call``), which
# reports its forward; this layer of the dispatch stack only makes that so.
_dispatch.register(_dispatch.Interposer(
    "record", 50, lambda: _recording.state.recorder is not None,
    lambda op, args, proceed: proceed(args)))
