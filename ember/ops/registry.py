"""How an op is declared — once, with everything about it — and how calling it records a graph.

The contract, in the manner of PyTorch's derivatives.yaml: one declaration per op, in its
family module, the public function directly under it, and one row in the tests' spec table::

    _hypot = defop("hypot", promote="float", jvp="elementwise", batch="pointwise",  # forward,
                   method=True, inplace=True)(                                    # JVP, batch,
        lambda xp, input, other: xp.hypot(input, other))                          # surface
    _hypot.defvjp(lambda xp, g, ans, input, other: g * input / ans,   # VJP: d/d input
                  lambda xp, g, ans, input, other: g * other / ans)   #      d/d other

    @_hypot.public                     # ember.hypot, Tensor.hypot, Tensor.hypot_
    def hypot(input, other, *, out=None): ...   # PyTorch's argument checks and messages

    Spec("hypot", lambda L, a, b: L.hypot(a, b), BINARY_SHAPES)   # tests/ops/test_ops_*.py

``docs/add_an_op.md`` walks through adding one. Each part:

**Forward.** It receives ``xp`` (the array namespace: numpy or cupy) and raw arrays, and
returns a raw array. Its first ``n_in`` parameters (default: all) are the *inputs*: tensors or
Python numbers that appear in ``next_functions``; the rest are plain parameters (dims,
shapes, ...). ``promote``: the inputs are cast to their result dtype first (``"float"``: and
integers to the default float dtype).

**VJP** (``defvjp``, below). **JVP** (``jvp=``, see ``Op.defjvp``): ``"elementwise"``,
``"linear"``, ``"multilinear"``, ``"transpose"``, or rules of its own.

**Batching rule** (``batch=``, see ``batching.py``): how the op runs on a whole vmap batch at
once — ``"pointwise"``, ``"moved"`` (or ``batching.moved(...)``), ``"unchanged"``,
``"matmul"``, ``"fold"``, ``"loss"``, a function written beside the op, or ``"loop"``, the
explicit opt-in to one call per sample. An op that declares none refuses under vmap.

**Surface** (``method=``, ``inplace=``, ``aliases=``, read by ``@op.public``; see
``_surface.py``): ``ember.<name>``, ``Tensor.<name>``, ``Tensor.<name>_``. A function that is
no one op's is declared with ``@public(...)``. Everything else — what ``import ember``
exports, the Tensor methods, the stubs for type checkers (``tools/tensor_stub.py``) — is read
off the declarations.

**Spec row.** Every op with a derivative is reached by a row of a spec table (the tests fail
otherwise): finite differences in float64 (first and second order), PyTorch's values and
gradients, forward mode, vmap against the loop over samples.

The VJP contract:

- An op declared without ``defvjp`` has no derivative (comparisons, logical ops): its results
  never require grad.
- ``defvjp`` takes one rule per input, ``None`` for an input that has no derivative. A rule
  receives ``xp``, the output gradient ``g``, the forward result ``ans`` and the forward's
  arguments, and returns the gradient for its input.
- Rules use Python operators and array-API functions of ``xp`` only. In an ordinary backward
  the engine hands them raw arrays (fast, nothing recorded); under ``create_graph=True`` it
  hands them ember Tensors and ember's array-API namespace, so the rule is recorded like any
  forward code and higher derivatives come free.
- A rule never undoes broadcasting or casts dtypes: the engine sums the gradient to the input's
  shape and casts it to the input's dtype, once, for every rule.
- What a node saves is read off the rules: an argument (or ``ans``) is saved only if a rule of an
  input that requires grad mentions it — exactly what PyTorch's derivatives.yaml saves.
- Any number of inputs (``cat``, ``stack``): ``defop(..., variadic=k)`` with the forward
  ``f(xp, *inputs_then_k_params)``; ``defvjp`` then takes one rule
  ``rule(xp, g, ans, i, inputs, *params)`` giving the gradient of input ``i``.
- Several outputs: ``defop(..., nout=2)``; the forward returns a tuple, and rules receive ``g``
  and ``ans`` as tuples (a missing output gradient arrives as zeros). Integer outputs (indices)
  never require grad. A rule reading ``ans`` saves every output, unless the op's
  ``saved_outputs`` names those derivatives.yaml saves (``sort``: ``(1,)``, its indices).
- The grad_fn class is named from the op name: ``defop("mul")`` -> ``MulBackward0``;
  ``overload=1`` -> ``...Backward1``, as PyTorch numbers its overloads.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..autograd.node import OpNode
from ._fast_path import _FastOp
from ._op import OPS, Op  # noqa: F401
from ._save_plan import saves_also
from ._surface import array_api, public

__all__ = ["defop", "Op", "OpNode", "OPS", "saves_also", "public", "array_api"]


def defop(name: str, *, n_in: int | None = None, promote: Any = False, overload: int = 0,
          nout: int | None = 1, variadic: int | None = None, jvp: str | None = None,
          batch: Any = None, method: Any = True, inplace: Any = False,
          aliases: tuple[str, ...] = (), holomorphic: bool = True
          ) -> Callable[[Callable[..., Any]], Op]:
    """Declare an op from its forward function (used as a decorator); ``jvp``: see
    ``Op.defjvp``; ``batch``: see ``batching.py``; ``method``, ``inplace``, ``aliases``: where
    the public function declared with ``@op.public`` goes (``_surface.py``)."""
    def wrap(forward):
        cls = Op
        if nout == 1 and variadic is None:
            code = forward.__code__
            inputs = code.co_argcount - 1 if n_in is None else n_in
            cls = _FastOp if inputs in (1, 2, 3) else Op
        op = cls(name, forward, n_in, promote, overload, nout, variadic, jvp, holomorphic, batch)
        op.method, op.inplace, op.aliases = method, inplace, aliases
        return op
    return wrap
