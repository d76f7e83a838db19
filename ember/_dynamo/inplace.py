"""Buffer reuse by liveness: ``s9 = s4 + s8`` replayed as ``s4 += s8`` where ``s4`` dies there.

A replay knows what eager mode cannot: when each array is read for the last time. An
elementwise operation whose left operand dies on its line can write its result into that
operand instead of a new array: no allocation, and on a large array one memory stream fewer.
``a += b`` computes each element as ``a + b`` does (the same NumPy loop, the result's dtype
being ``a``'s), so replays stay eager's results bit for bit.

The recorder marks, as it writes each line, the lines that could (``candidate``): ``+ - * /``
of arrays (of two elements or more) whose left operand is a *fresh* slot (made by such an
operation, so an array no one else holds: not a tensor's storage, not a cached constant) of
the result's shape and dtype.
``plan`` decides at code generation, when every slot's last read is known: the operand must
die on that line, not be kept (a result, a residual), and no other slot may share its memory
(a view of it) past the line; nor may anything outside the slots hold it (``escaped``: an
array handed to a call kept whole, such as the ``.grad`` accumulation that stores it).
"""
from __future__ import annotations

import ast
import functools

import numpy as np

__all__ = ["candidate", "is_fresh", "plan", "root"]

_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
_UFUNCS = {np.add: "+", np.subtract: "-", np.multiply: "*", np.true_divide: "/"}  # (calls)


def root(array):
    """The object that owns ``array``'s memory (its ``base``, down the chain)."""
    while getattr(array, "base", None) is not None:
        array = array.base
    return array


@functools.lru_cache(maxsize=1024)  # (a line's call is asked about twice: fresh, candidate)
def _expression(call):
    try:
        return ast.parse(call, mode="eval").body
    except SyntaxError:
        return None


def _ufunc_call(tree, lookup):
    """The ufunc a call ``c4(s0, s1)`` (no keywords) makes, or None."""
    if (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and not tree.keywords
            and not any(isinstance(a, ast.Starred) for a in tree.args)):
        fn = lookup(tree.func.id)
        return fn if isinstance(fn, np.ufunc) else None
    return None


def is_fresh(call, out, lookup):
    """Whether the array ``out`` of the line ``... = call`` is new and held by no one else:
    the result of an arithmetic operator or a ufunc's call, owning its memory. ``lookup``:
    the object a constant's name stands for."""
    tree = _expression(call)
    return (type(out) is np.ndarray and out.ndim > 0 and out.base is None
            and (isinstance(tree, ast.BinOp) or _ufunc_call(tree, lookup) is not None))


def candidate(call, out, fresh, array_of, lookup):
    """``(operand slot, in-place code)`` for the line ``... = call`` making ``out``, or None.
    ``fresh``: the fresh slots; ``array_of(slot)``: its array when recorded."""
    tree = _expression(call)
    if isinstance(tree, ast.BinOp) and type(tree.op) in _SYMBOLS:
        left, rest = tree.left, ast.unparse(tree.right)
        code = f"{{}} {_SYMBOLS[type(tree.op)]}= {rest}"
    elif _ufunc_call(tree, lookup) in _UFUNCS and len(tree.args) == 2:
        # (``a += b`` is ``add(a, b, out=a)`` for an ndarray ``a``, as a fresh slot is, without
        # the call's keyword parsing)
        left, rest = tree.args[0], ast.unparse(tree.args[1])
        code = f"{{}} {_UFUNCS[_ufunc_call(tree, lookup)]}= {rest}"
    else:
        return None
    if not (isinstance(left, ast.Name) and left.id in fresh):
        return None
    array = array_of(left.id)
    if (type(out) is not np.ndarray or out is array or out.shape != array.shape
            or out.dtype != array.dtype or out.strides != array.strides or out.size < 2):
        # (one element: NumPy's ``a += b`` there gives ``b``'s NaN where both are NaN, ``a + b``
        # gives ``a``'s, a sign bit apart; and nothing is saved)
        return None
    return left.id, code.format(left.id)


def plan(lines, keep, last, roots, escaped):
    """The lines whose candidate is taken: ``{index: in-place code}``. ``last``: each slot's
    last reading line; ``roots``: slot -> the id of its memory's owner."""
    sharing = {}
    for slot, r in roots.items():
        sharing.setdefault(r, []).append(slot)
    taken = {}
    for k, line in enumerate(lines):
        if line.inplace is None:
            continue
        slot, code = line.inplace
        r = roots[slot]
        if (slot in keep or last.get(slot) != k or r in escaped
                or any(o != slot and (o in keep or last.get(o, -1) >= k) for o in sharing[r])):
            continue
        taken[k] = code
    return taken
