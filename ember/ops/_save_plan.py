"""What an op's node saves, read off its rules (see ``registry.py``'s header).

``_names_read`` finds the parameters a rule's body reads; ``save_plan`` (``Op._save_plan``)
turns that into what a node keeps for a given set of inputs that require grad, once per set;
``saves_also`` adds tensors an op reads through raw-array parameters to its node's version
checks. The node itself is ``autograd/node.py``'s ``OpNode``.
"""
from __future__ import annotations

import dis

from .._tensor import Tensor as _Tensor
from ..autograd.node import OpNode

__all__ = ["save_plan", "saves_also"]


def _names_read(fn):
    """Names of the parameters that ``fn``'s body actually reads."""
    code = fn.__code__
    used = set(code.co_cellvars)  # parameters captured by inner functions
    for ins in dis.get_instructions(code):
        if ins.opname.startswith("LOAD_FAST") or ins.opname == "LOAD_DEREF":
            val = ins.argval
            used.update(val if isinstance(val, tuple) else (val,))
    return used


def save_plan(self, mask, n_in):
    """What a node keeps when the inputs in ``mask`` require grad (computed once per mask).

    Returns (inputs to drop, inputs to keep, whether to keep ``ans``, and per input whether
    it is kept). Plain parameters (dims, shapes) are always kept; inputs only when a rule
    that will run reads them.
    """
    save = set()
    for i in range(n_in):
        if mask >> i & 1:
            if self.variadic is not None:
                if self._reads[0]:  # (the variadic rule reads its inputs)
                    save.update(range(n_in))
            else:
                save.update(self._reads[i][0])
    # The result is kept whenever a rule reads it, whichever inputs require grad: PyTorch
    # saves outputs unconditionally (``pow(x, int_exponent)`` keeps its result), inputs
    # only for the rules that will run.
    save_ans = self._reads[1] if self.variadic is not None else any(
        ans_read for _, ans_read in self._reads)
    # Kept inputs in the order PyTorch checks its saved variables (by name: ``mat2``
    # before ``self``), so that of two modified ones the same is named in the error.
    kept = sorted((i for i in range(n_in) if i in save), key=self._check_order)
    plan = self._plans[mask] = (tuple(i for i in range(n_in) if i not in save),
                                tuple(kept), save_ans, tuple(i in save for i in range(n_in)))
    return plan


def saves_also(result, *tensors):
    """``result`` (a Tensor or a tuple of them) of an op call that reads ``tensors`` through
    raw arrays among its parameters (index keys, masks, targets): the call's node checks their
    versions too, as PyTorch checks every tensor a node saves, whatever its dtype. Returns
    ``result``."""
    node = (result[0] if isinstance(result, tuple) else result)._grad_fn
    if isinstance(node, OpNode) and node._saved is not None and _reads_params(node):
        node._inputs = (*node._inputs, *((None, t, t._vc[0]) for t in tensors
                                         if isinstance(t, _Tensor)))
        node._frees = True  # it saved a tensor: a second backward through it raises
    return result


def _reads_params(node):
    """Whether a rule that will run reads a parameter (the tensors are saved only then:
    ``scatter_add`` keeps its index for ``src``'s gradient, not for ``self``'s). Answered
    once per op and set of inputs with edges (each embedding and nll_loss call asks)."""
    op = node._op
    if op.variadic is not None:
        return True
    key = (op, tuple(fn is not None for fn, _ in node.next_functions))
    reads = _READS_PARAMS.get(key)
    if reads is None:
        reads = _READS_PARAMS[key] = any(
            j >= op.n_in for (fn, _), (read, _) in zip(node.next_functions, op._reads)
            if fn is not None for j in read)
    return reads


_READS_PARAMS = {}  # (op, which inputs have an edge) -> _reads_params
