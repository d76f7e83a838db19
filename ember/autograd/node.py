"""The node an op call records, and its one backward (``apply``).

An ``OpNode`` holds what the op's rules read (``_saved``), the saved tensor inputs with their
versions (``_inputs``), the forward result when a rule reads it (``_ans``) and each input's
shape and dtype (``_meta``). ``apply`` runs the op's VJP rules (declared in ``ember/ops``, see
``ops/registry.py``'s header) on an output gradient and fits each result to its input's shape
and dtype. The registry makes one subclass per op (``MulBackward0``); the engine
(``engine.py``) calls ``apply`` and ``release``.
"""
from __future__ import annotations

import numpy as np

from .. import _array_api, _dtypes, _recording, _xp
from .._broadcast import sum_to
from .._tensor import Tensor as _Tensor
from ..ops import reduced as _reduced
from . import forward_ad, saved_hooks
from .graph import Node, check_version, modified_error, raise_freed

__all__ = ["OpNode"]

_fw = forward_ad.state
_NUMPY = _xp.NUMPY
_ndarray = np.ndarray
_any_reduced = _reduced.any_reduced
_is_inexact = _dtypes.is_inexact
# The classes of the dtypes of gradients ``apply``'s fast path takes: real, not reduced.
_PLAIN = frozenset({type(np.dtype(np.float32)), type(np.dtype(np.float64))})

class OpNode(Node):
    """A recorded application of an op: saved values, input metadata, and the op's rules.

    ``_saved`` holds the forward's arguments as the rules read them in an ordinary backward
    (raw arrays, ``None`` where no rule needs the input); ``_inputs`` the saved tensor inputs
    as ``(index, tensor, version)``, for the version check and for ``create_graph``, where
    the rules run on the tensors themselves.
    """

    __slots__ = ("_saved", "_inputs", "_ans", "_ans_vc", "_meta", "_out_meta", "_frees")
    _op = None  # the Op, set on each generated subclass
    _fresh_grads = True  # see ``Node._fresh_grads``
    # The number of inputs of a one-output op of fixed inputs, whose ordinary backward
    # ``apply``'s fast path serves; -1 for a one-output variadic op (cat, stack), which it
    # serves too; 0 for the others (several outputs).
    _arity = 0
    _packed = None  # [(index or None for ans, unpack_hook, packed value)] under saved hooks

    @property
    def _freed(self):
        return self._saved is None

    def _check(self):
        """Raise if the saved values were freed or modified in place since the forward."""
        if self._saved is None:
            raise_freed()
        for _, tensor, version in self._inputs:
            if tensor._vc[0] != version:
                check_version(tensor, version, saved_by=self)
        if self._ans is not None:
            for k, (vc, version) in enumerate(self._ans_vc):
                if vc[0] != version:
                    raise RuntimeError(_ans_error(self, k))

    def _saved_values(self):
        """``(ans, saved, inputs)`` as recorded, or as the saved-tensor hooks' ``unpack_hook``
        gives them back (see ``autograd.graph.saved_tensors_hooks``)."""
        packed = self._packed
        if packed is None:
            return self._ans, self._saved, self._inputs
        saved = list(self._saved)
        inputs = []
        ans = None
        for i, unpack, value in packed:
            tensor = unpack(value)
            if i is None:
                ans = tensor._data
            else:
                saved[i] = tensor._data
                inputs.append((i, tensor, None))
        return ans, saved, inputs

    def _recorded_args(self, ans, saved, inputs):
        """The arguments and result as Tensors, for rules recorded under ``create_graph``."""
        args = list(saved)
        for i, tensor, _ in inputs:
            if i is not None:  # (None: a tensor read through a parameter, see ``saves_also``)
                args[i] = tensor
        if ans is not None:
            ans = (_output_tensor(ans, self, 0) if self._op.nout == 1 else
                   tuple(_output_tensor(a, self, k) for k, a in enumerate(ans)))
        return ans, args

    def apply(self, grad_outputs, create_graph):
        """Input gradients (one per edge, None where not needed) for the output gradient(s)."""
        g = grad_outputs[0]
        arity = self._arity
        if (arity and not create_graph and type(g) is _ndarray and type(g.dtype) in _PLAIN
                and self._saved is not None and self._packed is None):
            # The ordinary backward of a one-output op of fixed inputs (NumPy float gradients,
            # nothing recorded, packed, conjugated or upcast), the one fast path: it runs once
            # per node. One and two edges are written out (most ops): a loop costs more than
            # the rules.
            for _, tensor, version in self._inputs:
                if tensor._vc[0] != version:
                    check_version(tensor, version, saved_by=self)
            ans = self._ans
            if ans is not None and self._ans_vc[0][0][0] != self._ans_vc[0][1]:
                raise RuntimeError(_ans_error(self, 0))
            saved = self._saved
            rules = self._op.rules
            meta = self._meta
            if arity == 1:  # (its one edge needs a gradient: the node exists because of it)
                gi = rules[0](_NUMPY, g, ans, *saved)
                m = meta[0]
                if type(gi) is not _ndarray or gi.shape != m[0] or gi.dtype is not m[1]:
                    gi = _fitted(gi, m)
                return [gi]
            if arity == 2:
                (fa, _), (fb, _) = self.next_functions
                ga = gb = None
                if fa is not None:
                    ga = rules[0](_NUMPY, g, ans, *saved)
                    m = meta[0]
                    if type(ga) is not _ndarray or ga.shape != m[0] or ga.dtype is not m[1]:
                        ga = _fitted(ga, m)
                if fb is not None:
                    gb = rules[1](_NUMPY, g, ans, *saved)
                    m = meta[1]
                    if type(gb) is not _ndarray or gb.shape != m[0] or gb.dtype is not m[1]:
                        gb = _fitted(gb, m)
                return [ga, gb]
            if arity > 0:
                return [None if fn is None else _fitted(rule(_NUMPY, g, ans, *saved), m)
                        for (fn, _), rule, m in zip(self.next_functions, rules, meta)]
            # Variadic (an RNN's cat of [x, h] per step): the one rule, told which input, on
            # inputs of the gradient's dtype (a reduced one goes to the general path, upcast)
            n = len(self.next_functions)
            inputs, params = saved[:n], saved[n:]
            for a in inputs:
                if a is not None and type(a.dtype) not in _PLAIN:
                    return self._apply_general(grad_outputs, create_graph)
            return [None if fn is None else _fitted(rules(_NUMPY, g, ans, i, inputs, *params), m)
                    for i, ((fn, _), m) in enumerate(zip(self.next_functions, meta))]
        return self._apply_general(grad_outputs, create_graph)

    def _apply_general(self, grad_outputs, create_graph):
        """``apply`` for any node and gradients: recorded (``create_graph``), packed by
        saved-tensor hooks, complex (conjugated), reduced precision (upcast), several outputs,
        variadic inputs, other array namespaces."""
        self._check()
        op = self._op
        ans, args, inputs = self._saved_values()
        if create_graph:
            ans, args = self._recorded_args(ans, args, inputs)
        elif _any_reduced((grad_outputs, ans, args)):
            # reduced precision: the rules compute in float32, ``_fit`` rounds back
            grad_outputs = _reduced.upcast_values(grad_outputs)
            ans = _reduced.upcast_values(ans)
            args = _reduced.upcast_values(args)
        if op.nout == 1:
            g = grad_outputs[0]
            xp = (_xp_for(g, True) if create_graph else
                  _NUMPY if type(g) is np.ndarray else _xp.namespace_of(g))
        else:
            xp, g = self._output_grads(grad_outputs, create_graph)
        rules = op.rules
        if op.variadic is not None:
            n_in = len(self.next_functions)
            inputs, params = args[:n_in], args[n_in:]
            rules = [_variadic_rule(rules, i, inputs, params) for i in range(n_in)]
        # Rules state the derivative f'(z): g * f'(z). PyTorch's convention for complex numbers
        # hands back g * conj(f'(z)), which for a holomorphic op is conj(rule(conj(g))).
        # Ops that are not holomorphic (sgn) state their rule in that convention themselves.
        conjugate = op.holomorphic and _is_complex(g)
        if conjugate:
            g = tuple(_conj(xp, t) for t in g) if isinstance(g, tuple) else _conj(xp, g)
        out = []
        for (fn, _), rule, meta in zip(self.next_functions, rules, self._meta):
            if fn is None:
                out.append(None)
                continue
            gi = rule(xp, g, ans, *args)
            if gi is not None:
                if conjugate:
                    gi = _conj(xp, gi)
                gi = _fit(xp, gi, meta, create_graph)
            out.append(gi)
        return out

    def _output_grads(self, grad_outputs, create_graph):
        """The gradients of all outputs, zeros standing in for those that did not arrive
        (None instead for ops whose rules skip them: ``Op.missing_grads_as_none``)."""
        first = next(g for g in grad_outputs if g is not None)
        xp = _xp_for(first, create_graph)
        if self._op.missing_grads_as_none:
            return xp, tuple(grad_outputs)
        return xp, tuple(
            g if g is not None else (xp.zeros(shape, dtype=dtype) if _is_inexact(dtype) else None)
            for g, (shape, dtype) in zip(grad_outputs, self._out_meta))

    def release(self):
        """Drop saved values after a backward without retain_graph."""
        if self._frees:
            self._saved = None
            self._inputs = ()
            self._ans = None
            if self._packed is not None:  # (an instance attribute: made only under hooks)
                self._packed = None

    def snapshot_input(self, tensor):
        """Before ``tensor`` is overwritten in place, keep a copy of it where this node saved it.

        PyTorch saves the original ``self`` of in-place ops whose other inputs' derivatives
        need it (``a.mul_(b)`` with ``b`` requiring grad); the copy keeps ``tensor``'s history.
        """
        if not any(t is tensor and i == 0 for i, t, _ in self._inputs):
            return
        old = _Tensor._make(_recording.opaque(_copy, tensor._data), tensor._grad_fn, tensor._rg)
        old._output_nr = tensor._output_nr
        saved = self._saved = list(self._saved)
        inputs = []
        for i, t, version in self._inputs:
            if t is tensor and i == 0:  # (the same tensor as another input stays: ``t *= t``)
                if saved[i] is tensor._data:  # not a promoted copy
                    saved[i] = old._data
                t, version = old, 0
            inputs.append((i, t, version))
        self._inputs = tuple(inputs)


def _copy(array):
    """A copy of ``array`` (a call compiled mode records)."""
    return array.copy()


def _fitted(gi, meta):
    """A rule's NumPy result as an input's gradient (``_fit``, after a cheap test that it
    fits)."""
    if gi is not None and (type(gi) is not _ndarray or gi.shape != meta[0]
                           or gi.dtype is not meta[1]):
        return _fit(_NUMPY, gi, meta, False)
    return gi


def _pack(node):
    """Hand the node's saved tensors (inputs, and its result as a tensor without history)
    to the innermost ``saved_tensors_hooks``' ``pack_hook``; keep what it returns instead."""
    pack, unpack = saved_hooks.stack[-1]
    packed = []
    for i, tensor, _ in node._inputs:
        packed.append((i, unpack, pack(tensor)))
        node._saved[i] = None
    if node._ans is not None:
        outs = (node._ans,) if node._op.nout == 1 else node._ans
        if len(outs) == 1:  # several outputs: saved as they are (sort's indices, ...)
            packed.append((None, unpack, pack(_Tensor._make(outs[0], None, False))))
            node._ans = None
    node._inputs = ()
    node._packed = packed


def _is_complex(g):
    """Whether a gradient (raw array or Tensor; a tuple: any of them) is complex."""
    if isinstance(g, tuple):
        return any(t is not None and _is_complex(t) for t in g)
    return g.is_complex() if isinstance(g, _Tensor) else g.dtype.kind == "c"


def _conj(xp, t):
    return t if t is None or not _is_complex(t) else xp.conj(t)


def _fit(xp, gi, meta, create_graph):
    """An input's gradient as the rule gave it, made an array of the input's shape and dtype:
    broadcasting undone (summed), cast, NumPy's 0-d scalars made arrays."""
    if isinstance(gi, np.generic):
        gi = np.asarray(gi)
    shape, dtype = meta
    if gi.shape != shape:
        gi = sum_to(xp, gi, shape)
    if gi.dtype != dtype:
        if not create_graph and gi.dtype.kind == "c" and dtype.kind != "c":
            gi = gi.real  # a real input keeps the real part, as in PyTorch
        gi = xp.astype(gi, dtype)
    return gi


_count_outputs = property(lambda node: len(node._out_meta))  # ops with nout=None (unbind)


def _output_tensor(array, node, output_nr):
    """An output of ``node`` rebuilt from its saved array (for rules under create_graph),
    with its forward-mode tangent if it had one."""
    t = _Tensor._make(array, node, True)
    t._output_nr = output_nr
    if _fw.level is not None:
        tangent = forward_ad.output_tangent(node, output_nr)
        if tangent is not None:
            forward_ad.set_tangent(t, tangent)
    return t


def _ans_error(node, k):
    arr = node._ans if node._op.nout == 1 else node._ans[k]
    dt = _dtypes.from_numpy_dtype(arr.dtype)
    vc, expected = node._ans_vc[k]
    fn = node if _is_inexact(arr.dtype) else None  # (indices have no grad_fn to name)
    return modified_error(f"torch.{dt._legacy}", arr.shape, fn, k, vc[0], expected)


def _variadic_rule(shared, i, inputs, params):
    """Input ``i``'s rule of a variadic op, in the per-input rule signature."""
    return lambda xp, g, ans, *_: shared(xp, g, ans, i, inputs, *params)


def _xp_for(g, create_graph):
    if create_graph:
        return _array_api.on_device(g.device)
    return _NUMPY if type(g) is np.ndarray else _xp.namespace_of(g)
