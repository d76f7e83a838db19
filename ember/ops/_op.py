"""The ``Op`` class: a declared op (``registry.py``'s header is the contract), and its call.

``Op.__call__`` asks the dispatch stack (``_dispatch.py``) whether an interposer is active,
else runs ``_call``: promotion (``_promotion.py``), the forward on raw arrays (NumPy's errors
translated by ``_op_errors.py``), and the node when one is needed, keeping what the save plan
(``_save_plan.py``) says. The node is ``autograd/node.py``'s ``OpNode``; forward mode is
``_jvp.py``; the shorter call of one- and two-input ops is ``_fast_path.py``.
"""
from __future__ import annotations

import inspect
import re
import types

import numpy as np

from .. import _dispatch, _dtypes, _recording, _xp
from .._tensor import Tensor as _Tensor
from ..autograd import anomaly_mode, grad_mode, saved_hooks
from ..autograd.graph import accumulate_grad_of, sequence
from ..autograd.node import (
    OpNode,
    _count_outputs,
    _output_tensor,
    _pack,
)
from ..autograd.views import fresh
from . import _surface
from . import autocast as _amp
from . import reduced as _reduced
from ._jvp import _transposed_vjp, jvp
from ._op_errors import _raise_broadcast_error, _raise_device_error
from ._promotion import _promote
from ._save_plan import _names_read, save_plan
from .reduced import reduced

__all__ = ["Op", "OPS"]

OPS = []  # every declared op, in declaration order (tests check each has a spec)

_state = grad_mode._state
_anomaly = anomaly_mode.state
_dispatching = _dispatch.state  # ``.active``: whether an interposer is active (``_dispatch.py``)
_recording_state = _recording.state  # ``.recorder``: compiled mode's, while one records
_NUMPY = _xp.NUMPY
_ndarray = np.ndarray
# The classes of the floating and complex dtypes (``type(d) in _INEXACT`` reads no attribute
# of ``d``: cheaper than ``d.kind in "fc"`` on the hot path); bfloat16's joins once it is used.
_INEXACT = _dtypes._INEXACT_TYPES
_NUMBERS = (int, float, bool)
# The classes of the reduced-precision dtypes (float16; bfloat16 once used), which ops compute
# in float32 (``ops/reduced.py``).
_LOWP = _dtypes.LOW_PRECISION_TYPES
_is_inexact = _dtypes.is_inexact


def _camel(name):
    """PyTorch's node naming: ``log_softmax`` -> ``LogSoftmax``, ``log1p`` -> ``Log1P``."""
    name = re.sub(r"(?<=\d)([a-z])", lambda m: m.group(1).upper(), name)
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


class Op:
    """A differentiable primitive: forward on raw arrays plus one vjp rule per input."""

    # The outputs a multi-output node saves when its rules read ``ans`` (None: all of them), as
    # derivatives.yaml says: ``sort`` saves only its indices, so writing into its values in
    # place leaves its backward valid.
    saved_outputs: tuple[int, ...] | None = None
    # Whether a multi-output op's rules take None for an output whose gradient did not arrive
    # (PyTorch's undefined gradient: ``var_mean`` skips its variance part, which is NaN for a
    # single element even times zero).
    missing_grads_as_none = False
    # The arguments where a Python number beside a bfloat16 tensor is rounded to bfloat16
    # first, as PyTorch casts it to the common dtype (see ``_upcast``); None: the inputs.
    # ``()`` for mul and div, whose kernels read it unrounded; a parameter's index where the
    # number is an operand the forward takes as a parameter (``rsub``'s ``other``).
    scalar_operands = None
    # Where the op's public function goes (``defop``'s arguments; ``_surface.py``).
    method = True
    inplace = False
    aliases = ()

    def __init__(self, name, forward, n_in, promote, overload, nout=1, variadic=None, jvp=None,
                 holomorphic=True, batch=None):
        self.name = self.__name__ = name
        self.batch = batch  # the batching rule under vmap (``batching.py``): a kind or a function
        self.holomorphic = holomorphic  # see OpNode.apply: complex gradients
        self.__doc__ = forward.__doc__
        self.forward = forward
        self.nout = nout
        self.variadic = variadic  # number of trailing parameters of a variadic op
        argnames = forward.__code__.co_varnames[1:forward.__code__.co_argcount]
        self.argnames = argnames
        self.n_in = len(argnames) if n_in is None else n_in
        self.promote = promote
        self.rules = None
        self.jvp_kind = jvp  # see defjvp
        self.jvp_rules = None
        self._reads = None
        self._plans = {}  # requires-grad mask (top bit: number of inputs) -> save plan
        torch_names = [("self" if n == "input" else n) for n in argnames]
        self._check_order = lambda i: torch_names[i] if i < len(torch_names) else ""
        self._b_first = len(argnames) > 1 and torch_names[1] < torch_names[0]  # (_FastOp)
        self.node_cls = type(f"{_camel(name)}Backward{overload}", (OpNode,),
                             {"__slots__": (), "_op": staticmethod(self),  # no binding
                              "_arity": 0 if nout != 1 else self.n_in if variadic is None
                              else -1,
                              "_n_outputs": nout if nout is not None else _count_outputs})
        # The autocast policy of the PyTorch op of this name (``ops/autocast.py``), or None.
        self.autocast = _amp.policy_of(name)
        OPS.append(self)

    def defvjp(self, *rules):
        if self.variadic is not None:
            (rule,) = rules
            self.rules = rule
            self._reads = "inputs" in _names_read(rule), rule.__code__.co_varnames[2] in \
                _names_read(rule)
            return self
        if len(rules) != self.n_in:
            raise TypeError(f"{self.name}: {self.n_in} rules expected, got {len(rules)}")
        self.rules = rules
        reads = []
        for rule in rules:
            if rule is None:
                reads.append(((), False))
                continue
            # A checking wrapper (``functools.wraps``, as linalg's ``real_only``) keeps what
            # the rule it calls reads, and ``ans`` if it reads that itself
            inner = inspect.unwrap(rule)
            code = inner.__code__
            params = code.co_varnames[3:code.co_argcount]
            used = _names_read(inner)
            reads_ans = code.co_varnames[2] in used or (
                inner is not rule and rule.__code__.co_varnames[2] in _names_read(rule))
            reads.append((tuple(i for i, n in enumerate(params) if n in used), reads_ans))
        self._reads = tuple(reads)
        return self

    def defvjp_into(self, add_into):
        """For an op that reads part of its one input (whose rule writes ``g`` into zeros of
        the input's shape): ``add_into(out, g, *args)`` adds that gradient into ``out`` in
        place. The engine uses it where the input's gradient has begun to sum already (an
        RNN's ``emb[:, t]`` per step): one write of the part, not zeros and a whole sum."""
        self.node_cls._adds_into = staticmethod(add_into)
        return self

    def defjvp(self, *rules):
        """Forward mode: one rule per input, ``rule(xp, t, ans, *args)`` -> that input's part of
        the output's tangent ``J·t`` (``t``: the input's tangent; a tuple per output for ops
        with several). Ops whose JVP follows from what they are say so to ``defop`` instead:

        - ``jvp="elementwise"``: the Jacobian is diagonal, so the VJP rules are the JVP rules;
        - ``jvp="linear"``: linear in all inputs together (shape ops, ``sum``, ``cat``, ``add``):
          the tangent is the op applied to the tangents (zeros for inputs without one);
        - ``jvp="multilinear"``: linear in each input alone (``mul``, ``matmul``, ``einsum``):
          the sum over inputs of the op with that input replaced by its tangent;
        - ``jvp="transpose"``: the VJP rules transposed (``J·t`` is the gradient with respect
          to ``v`` of ``(Jᵀ·v)·t``, which is linear in ``v``): exact for any op whose VJP rules
          are differentiable, at the cost of a small backward pass; for ops whose JVP has no
          shorter form (sorting, decompositions, softmax).
        """
        self.jvp_kind = "rules"
        self.jvp_rules = rules
        return self

    jvp = jvp
    _transposed_vjp = _transposed_vjp

    def public(self, fn: _surface._F) -> _surface._F:
        """Declare ``fn`` (the decorated function, written under the op) the op's public
        function, where ``defop``'s ``method``, ``inplace`` and ``aliases`` say."""
        return _surface.public(fn, method=self.method, inplace=self.inplace,
                               aliases=self.aliases)

    def __repr__(self):
        return f"<ember op {self.name}>"

    def __get__(self, obj, objtype=None):
        """Bind like a function, so an op can serve directly as a Tensor method."""
        return self if obj is None else types.MethodType(self, obj)

    def __call__(self, *args):
        """Run the forward on ``args`` and record a node if grad mode is on and it is needed;
        through the active interposers (autocast, vmap, forward AD, anomaly: ``_dispatch.py``)
        when any is."""
        if _dispatching.active:
            return _dispatch.run(self, args, _record_call)
        return self._call(args)

    def _call(self, args):
        """The bottom of the dispatch stack, "record": the forward on raw arrays, and the node
        when one is needed."""
        n_in = self.n_in if self.variadic is None else len(args) - self.variadic
        Tensor = _Tensor
        requires = False
        xp = None
        arrays = list(args)
        # Whether float16/bfloat16 may be involved: a Tensor input of such a dtype, an input
        # that is neither a Tensor nor a Python number, or a dtype among the parameters. Only
        # then does ``upcast`` look (it walks every input: 32 for a stack of 32).
        low_maybe = False
        for i in range(n_in, len(args)):
            if isinstance(args[i], np.dtype):
                low_maybe = True
        for i in range(n_in):
            a = args[i]
            if isinstance(a, Tensor):
                data = arrays[i] = a._data
                if a._base is not None and a._vc[0] != a._vv and _state.grad and self.rules:
                    fresh(a)  # a view whose storage was written since: its history anew
                if a._rg:
                    requires = True
                if xp is None:
                    xp = _NUMPY if type(data) is np.ndarray else _xp.namespace_of(data)
                if type(data.dtype) in _LOWP:
                    low_maybe = True
            elif type(a) not in _NUMBERS:
                low_maybe = True
        recorder = _recording_state.recorder
        given = arrays[:] if recorder is not None else None
        if self.promote and n_in:
            _promote(self.promote, args, arrays, n_in)
        if xp is None:  # raw arrays or Python numbers only
            xp = _xp_of(arrays, n_in)
        low = _reduced.upcast(arrays, n_in, self.scalar_operands) if low_maybe else None
        if recorder is not None and low is not None:
            recorder.fail(f"{self.name} computes in reduced precision (not recorded yet)")
            recorder = None
        try:
            if low is None:
                out = self.forward(xp, *arrays)
            else:
                reduced[0] = low
                try:
                    out = _reduced.round_to(self.forward(xp, *arrays), low)
                finally:
                    reduced[0] = None
        except ValueError:
            _raise_broadcast_error(arrays[:n_in])
            raise
        except TypeError:
            _raise_device_error(args[:n_in])
            raise
        if self.nout != 1:
            raw = out
            if any(isinstance(o, np.generic) for o in out):  # NumPy's scalars: 0-d arrays
                out = tuple(np.asarray(o) if isinstance(o, np.generic) else o for o in out)
            if recorder is not None:
                recorder.forward(self, xp, args, given, arrays, n_in, raw, out)
            return self._wrap_outputs(args, arrays, out, requires, n_in)
        raw = out
        if type(out) is not np.ndarray and isinstance(out, np.generic):
            out = np.asarray(out)  # NumPy gives scalars for 0-d results
        if recorder is not None:
            recorder.forward(self, xp, args, given, arrays, n_in, raw, out)
        if not (requires and _state.grad) or self.rules is None or \
                type(out.dtype) not in _INEXACT:
            result = Tensor._make(out, None, False)  # integer and bool results never need grad
        else:
            result = self._recorded(args, arrays, out, n_in)
        return result

    def _wrap_outputs(self, args, arrays, outs, requires, n_in):
        """Tensors for a multi-output op; floating outputs share one node (``output_nr`` k)."""
        node = None
        if requires and _state.grad and self.rules is not None and any(
                _is_inexact(o.dtype) for o in outs):
            node = self._record(args, arrays, outs, n_in)
            node._out_meta = tuple((o.shape, o.dtype) for o in outs)
        results = []
        for k, o in enumerate(outs):
            if node is not None and _is_inexact(o.dtype):
                results.append(_output_tensor(o, node, k))
            else:
                results.append(_Tensor._make(o, None, False))
        if node is not None and node._ans is not None:
            keep = self.saved_outputs
            node._ans_vc = tuple((t._vc, t._vc[0]) if keep is None or k in keep else _UNSAVED
                                 for k, t in enumerate(results))
        return tuple(results)

    def _recorded(self, args, arrays, out, n_in):
        """The result of a one-output call that records: its Tensor, made by a new node."""
        return _result(self._record(args, arrays, out, n_in), out)

    def _record(self, args, arrays, out, n_in):
        """The node of one call: edges to the inputs' nodes and what the rules will read."""
        Tensor = _Tensor
        nexts = []
        meta = []
        mask = 1 << n_in  # bit i: input i requires grad; the top bit: how many inputs
        for i in range(n_in):
            a = args[i]
            if isinstance(a, Tensor) and a._rg:
                nexts.append(_edge(a))
                data = a._data
                meta.append((data.shape, data.dtype))
                mask |= 1 << i
            else:
                nexts.append(_NO_EDGE)
                meta.append(None)
        plan = self._plans.get(mask) or self._save_plan(mask, n_in)
        dropped, kept_inputs, save_ans, _ = plan
        # Keep what the rules read (the raw arrays they will get), and each saved tensor input
        # with its version, for the check and for create_graph.
        for i in dropped:
            arrays[i] = None
        inputs = ()
        frees = save_ans  # whether release() frees anything: nodes saving nothing rerun
        if kept_inputs:
            inputs = []
            for i in kept_inputs:
                a = args[i]
                if a is not None:
                    frees = True
                    if isinstance(a, Tensor):
                        inputs.append((i, a, a._vc[0]))
        return self._node(tuple(nexts), meta, arrays, inputs, out if save_ans else None, frees)

    def _node(self, nexts, meta, saved, inputs, ans, frees):
        """A new node of this op with the edges and saved values of one call (see OpNode)."""
        node = self.node_cls.__new__(self.node_cls)
        node.next_functions = nexts
        node._seq = next(sequence)  # after the edges: a leaf's AccumulateGrad comes first
        node._meta = meta
        node._saved = saved
        node._inputs = inputs
        node._ans = ans
        node._frees = frees
        if saved_hooks.stack:
            _pack(node)
        if _anomaly.enabled:
            anomaly_mode.remember(node)
        return node

    _save_plan = save_plan


_NO_EDGE = (None, 0)


def _record_call(op, args):
    return op._call(args)


def _edge(tensor):
    """The edge to a tensor that requires grad: its node, or its leaf's ``AccumulateGrad``."""
    fn = tensor._grad_fn
    return (fn, tensor._output_nr) if fn is not None else (accumulate_grad_of(tensor), 0)

_UNSAVED = ([0], 0)  # the version check of an output not saved: never fails


def _result(node, out):
    """The Tensor of a one-output node's result ``out``."""
    result = _Tensor._make(out, node, True)
    if node._ans is not None:
        node._ans_vc = ((result._vc, 0),)  # the result's version, checked in backward
    return result


def _xp_of(arrays, n_in):
    for i in range(n_in):
        a = arrays[i]
        if type(a) is np.ndarray:
            return _NUMPY
        if hasattr(a, "dtype"):
            return _xp.namespace_of(a)
    return _NUMPY
