"""The op call's one fast path: ``_FastOp``, the class of ops of one output and one or two
inputs (see its docstring; ``tests/test_node_fast_path.py`` checks it builds the general
path's nodes)."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor as _Tensor
from ..autograd.graph import accumulate_grad_of
from ..autograd.views import fresh
from ._op import (
    _INEXACT,
    _LOWP,
    _NO_EDGE,
    _NUMPY,
    Op,
    _dispatching,
    _edge,
    _ndarray,
    _result,
    _state,
)


class _FastOp(Op):
    """An op of one output and one or two inputs, with a shorter call (the one fast path) when
    no interposer is active and its inputs are NumPy-backed tensors of one dtype, or a tensor
    and a Python number that does not change its dtype. It builds its node with the general
    path's ``_node`` and ``_result`` (``tests/test_node_fast_path.py`` checks the nodes are
    equal); anything else goes to ``Op.__call__``."""

    def __call__(self, a, *rest):
        Tensor = _Tensor
        if _dispatching.active or not isinstance(a, Tensor):
            return Op.__call__(self, a, *rest)
        da = a._data
        dtype = da.dtype
        if type(da) is not _ndarray or (self.promote == "float" and
                                        type(dtype) not in _INEXACT) or type(dtype) in _LOWP:
            return Op.__call__(self, a, *rest)
        try:
            if self.n_in == 1:
                b = None
                b_rg = False
                out = self.forward(_NUMPY, da, *rest) if rest else self.forward(_NUMPY, da)
            else:
                b = rest[0]
                if isinstance(b, Tensor):
                    db = b._data
                    if b._base is not None and b._vc[0] != b._vv and _state.grad and self.rules:
                        fresh(b)
                    b_rg = b._rg
                    dtype_b = db.dtype
                    if type(db) is not _ndarray or self.promote and dtype_b is not dtype or \
                            type(dtype_b) in _LOWP:
                        return Op.__call__(self, a, *rest)
                elif type(b) is float or type(b) is int:
                    db = b
                    b_rg = False
                    if self.promote and type(dtype) not in _INEXACT:
                        return Op.__call__(self, a, *rest)
                else:
                    return Op.__call__(self, a, *rest)
                out = (self.forward(_NUMPY, da, db, *rest[1:]) if len(rest) > 1 else
                       self.forward(_NUMPY, da, db))
        except (ValueError, TypeError):
            return Op.__call__(self, a, *rest)  # again, to raise PyTorch's error
        if type(out) is not _ndarray:
            if not isinstance(out, np.generic):  # another kind of array (a copy to the GPU)
                return Op.__call__(self, a, *rest)
            out = np.asarray(out)  # NumPy gives scalars for 0-d results
        if a._base is not None and a._vc[0] != a._vv and _state.grad and self.rules:
            fresh(a)
        a_rg = a._rg
        out_dtype = out.dtype
        if not (a_rg or b_rg) or not _state.grad or self.rules is None or (
                out_dtype is not dtype and type(out_dtype) not in _INEXACT):
            return Tensor._make(out, None, False)
        # What ``_record`` finds, for these inputs: edges, metadata, what the rules read, and
        # each saved tensor with its version (a Python number ``b`` has none).
        mask = (a_rg | b_rg << 1) | 1 << self.n_in
        _, _, save_ans, keep = self._plans.get(mask) or self._save_plan(mask, self.n_in)
        inputs = ((0, a, a._vc[0]),) if keep[0] else ()
        if a_rg:  # (``_edge(a)``, written out: this runs once per op)
            fn = a._grad_fn
            edge = (fn, a._output_nr) if fn is not None else (accumulate_grad_of(a), 0)
        else:
            edge = _NO_EDGE
        if b is None:
            arrays = [da if keep[0] else None, *rest]
            nexts = (edge,)
            meta = [(da.shape, dtype)]
        else:
            arrays = [da if keep[0] else None, db if keep[1] else None, *rest[1:]]
            nexts = (edge, _edge(b) if b_rg else _NO_EDGE)
            meta = [(da.shape, dtype) if a_rg else None, (db.shape, dtype_b) if b_rg else None]
            if keep[1] and b is not db:
                inputs = (((1, b, b._vc[0]),) + inputs if self._b_first else
                          inputs + ((1, b, b._vc[0]),))
        return _result(self._node(nexts, meta, arrays, inputs, out if save_ans else None,
                                  keep[0] or save_ans or b is not None and keep[1]), out)
