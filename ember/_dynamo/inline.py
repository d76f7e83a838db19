"""Inlining a recorded call: ``c3(c4, s0, s1)`` written as ``s0 * s1`` in the replay.

Most of ember's forwards and backward rules are one expression over their arguments
(``lambda xp, g, ans, input, other: g * other``). A replay that calls one pays a Python call
for a NumPy operation that, on a small array, costs about as much; written out, the replay
runs that expression's NumPy calls alone. ``expression(fn, args, const)`` gives the source of
``fn`` applied to ``args`` (their sources: slots, literals, constants) when ``fn`` is such a
function, found in its file's source:

- a ``lambda``, or a ``def`` whose body is one ``return`` (after a docstring);
- every name it reads is a parameter, or a global, closure or builtin name holding a module,
  a function, a ufunc, a type or a number (things nothing writes), made a constant;
- ``xp.exp`` with ``xp`` a module (or ember's raw namespace) constant is that function as
  a constant;
- ``a if test else b`` with a test on literals only is decided here (``alpha == 1``);
- an argument that is not a name or a literal is not read twice.

Anything else (several statements, a comprehension, an assignment expression, a name it
cannot resolve) is left a call. The expression computes what the call would, by the same
NumPy calls in the same order, so replays stay eager's results bit for bit.
"""
from __future__ import annotations

import ast
import builtins
import dis
import functools
import linecache
import re
import types

import numpy as np

from .. import _xp

__all__ = ["expression"]

# (what a name may hold to be made a constant: things nothing writes; ``type(np.sum)``: NumPy's
# dispatcher of a Python-level function)
_STATIC = (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type, np.ufunc,
           type(np.sum), functools.partial, int, float, bool, str, type(None), np.dtype)
_SCOPED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
           ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)
_bodies = {}  # code object -> (parameter names, expression) or None


def expression(fn, args, const, lookup, memo=None):
    """Source of ``fn(*args)`` written out, or None where ``fn`` is not a one-expression
    function of resolvable names. ``args``: sources; ``const(obj)``: a constant's name;
    ``lookup(name)``: the object a constant's or a slot's name stands for (None for any other
    name). ``memo``: a dict kept by the caller (one recording, whose constants' names stay)
    for calls alike but for their slots (a layer's rules in each step of an unrolled RNN):
    written out once with placeholders, the slots' names put in after."""
    if memo is None:
        return _expression(fn, args, const, lookup)
    slots, key = {}, [fn]
    for a in args:
        if _SLOT.fullmatch(a):
            array = lookup(a)
            key.append((getattr(array, "dtype", None), getattr(array, "shape", None)))
            slots[f"__p{len(slots)}__"] = a
            continue
        key.append(a)
    key = tuple(key)
    if key not in memo:
        holders = iter(slots)
        memo[key] = _expression(
            fn, [next(holders) if _SLOT.fullmatch(a) else a for a in args], const,
            lambda name: lookup(slots.get(name, name)))
    template = memo[key]
    return template and _HOLDER.sub(lambda m: slots[m.group(0)], template)


_SLOT = re.compile(r"s\d+")
_HOLDER = re.compile(r"__p\d+__")


def _expression(fn, args, const, lookup):
    """``expression`` without the memo."""
    resolved = (_resolved(fn, [_parse(a) for a in args], lookup)
                if hasattr(fn, "resolve") else None)
    if resolved is not None:
        fn, nodes = resolved
        args = [ast.unparse(a) for a in nodes]
        return _expression(fn, args, const, lookup) or f"{const(fn)}({', '.join(args)})"
    code = getattr(fn, "__code__", None)
    if code is None or type(fn) is not types.FunctionType:
        return None
    if code not in _bodies:
        _bodies[code] = _body(fn, code)
    found = _bodies[code]
    if found is None:
        return None
    params, body = found
    if len(args) > len(params):
        return None
    defaults = fn.__defaults__ or ()
    missing = len(params) - len(args)
    if missing > len(defaults):
        return None
    given = {}
    try:
        for name, src in zip(params, args):
            given[name] = ast.parse(src, mode="eval").body
    except SyntaxError:
        return None
    for name, value in zip(params[len(args):], defaults[len(defaults) - missing:]):
        if not isinstance(value, _STATIC):
            return None
        given[name] = _name(const(value))
    uses = {}
    for node in ast.walk(body):
        if isinstance(node, ast.Name) and node.id in given:
            uses[node.id] = uses.get(node.id, 0) + 1
    if any(n > 1 and not _atomic(given[p]) for p, n in uses.items()):
        return None  # (an expression argument would be computed twice)
    try:
        tree = _Substitute(fn, given, const, lookup).visit(_copy(body))
    except _CannotInline:
        return None
    return ast.unparse(ast.fix_missing_locations(tree))


class _CannotInline(Exception):
    pass


def _parse(source):
    try:
        return ast.parse(source, mode="eval").body
    except SyntaxError:
        return None


def _resolved(fn, nodes, lookup):
    """``(function, argument nodes)`` that a call of ``fn`` on ``nodes`` is, where ``fn``
    says so for the arguments' values (``fn.resolve(*values)``: a wrapper that, for these
    dtypes and sizes, calls one function on some of its arguments: ``_opmath`` of arrays
    not half, a blockwise kernel of arrays it runs whole); None otherwise."""
    resolve = getattr(fn, "resolve", None)
    if resolve is None or None in nodes:
        return None
    values = []
    for node in nodes:
        if isinstance(node, ast.Constant):
            values.append(node.value)
        elif isinstance(node, ast.Name) and lookup(node.id) is not None:
            values.append(lookup(node.id))
        else:
            return None
    found = resolve(*values)
    if found is None:
        return None
    target, positions = found
    return target, [nodes[i] for i in positions]


def _body(fn, code):
    """``(parameter names, expression)`` of ``fn``'s one expression, or None. Found in the
    top-level statement of its file around its first line (not the whole module: parsing
    every file a recording touches costs more than the recording), the lambda or def there
    whose parameters are the code's and whose body holds the code's first instruction."""
    if code.co_flags & (0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200):  # (*args, **kw, generator,
        return None  # coroutine, async): not one plain expression
    params = code.co_varnames[:code.co_argcount]
    if code.co_kwonlyargcount or fn.__kwdefaults__:
        return None
    tree, offset = _statement(code.co_filename, code.co_firstlineno)
    if tree is None:
        return None
    at = next(((p[0] - offset, p[2]) for ins, p in zip(dis.get_instructions(code),
                                                       code.co_positions())
               if ins.opname != "RESUME" and p[0] is not None and p[2] is not None), None)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda):
            first = node.lineno
        elif isinstance(node, ast.FunctionDef):
            first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        else:
            continue
        if first + offset != code.co_firstlineno or isinstance(node, ast.FunctionDef) \
                and node.name != code.co_name:
            continue
        if [a.arg for a in node.args.args] != list(params) or node.args.posonlyargs:
            continue
        if isinstance(node, ast.Lambda) and at is not None and not (
                (node.body.lineno, node.body.col_offset) <= at
                <= (node.body.end_lineno, node.body.end_col_offset)):
            continue  # (another lambda of these parameters on the line)
        found.append(node)
    if len(found) != 1:
        return None  # (not found, or two alike: which is this one?)
    node = found[0]
    if isinstance(node, ast.Lambda):
        body = node.body
    else:
        stmts = node.body
        if stmts and isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value, ast.Constant):
            stmts = stmts[1:]  # (the docstring)
        if len(stmts) != 1 or not isinstance(stmts[0], ast.Return) or stmts[0].value is None:
            return None
        body = stmts[0].value
    if any(isinstance(n, _SCOPED) for n in ast.walk(body)):
        return None
    return params, body


def _statement(filename, line):
    """``(tree, offset)``: the parsed top-level statement of ``filename`` holding ``line``
    (the tree's line k is the file's line k + offset); ``(None, 0)`` if not found."""
    key = (filename, line)
    if key not in _statements:
        _statements[key] = _find_statement(linecache.getlines(filename), line)
    return _statements[key]


def _find_statement(lines, line):
    starts = [k for k in range(min(line, len(lines)) - 1, -1, -1)
              if lines[k][:1] not in _NOT_A_START][:_TRIES]
    for start in starts:  # (a line at column 0 may be inside a string: try further up)
        for stop in range(line, min(len(lines), line + _LONGEST) + 1):
            if stop < len(lines) and lines[stop][:1] in _NOT_A_START:
                continue  # (the statement goes on)
            try:
                return ast.parse("".join(lines[start:stop])), start
            except SyntaxError:
                continue
    return None, 0


_statements = {}  # (file, line) -> (tree, offset)
_NOT_A_START = (" ", "\t", "\n", "#", ")", "]", "}", "")
_TRIES, _LONGEST = 4, 400  # column-0 lines tried; lines a statement may run on


def _copy(node):
    return ast.parse(ast.unparse(node), mode="eval").body


def _atomic(node):
    return isinstance(node, (ast.Name, ast.Constant)) or isinstance(
        node, (ast.Tuple, ast.List)) and all(_atomic(e) for e in node.elts)


def _name(source):
    return ast.Name(id=source, ctx=ast.Load())


class _Substitute(ast.NodeTransformer):
    """Parameters replaced by their arguments, free names by constants, ``xp.f`` by ``f``,
    tests on literals decided."""

    def __init__(self, fn, given, const, lookup):
        self.fn, self.given, self.const, self.lookup = fn, given, const, lookup
        code = fn.__code__
        self.cells = dict(zip(code.co_freevars, fn.__closure__ or ()))

    def _static(self, obj):
        if not isinstance(obj, _STATIC):
            raise _CannotInline
        return obj

    def visit_Name(self, node):
        if not isinstance(node.ctx, ast.Load):
            raise _CannotInline
        if node.id in self.given:
            return _copy(self.given[node.id])
        if node.id in self.cells:
            try:
                value = self.cells[node.id].cell_contents
            except ValueError:
                raise _CannotInline from None
        elif node.id in self.fn.__globals__:
            value = self.fn.__globals__[node.id]
        elif hasattr(builtins, node.id):
            value = getattr(builtins, node.id)
        else:
            raise _CannotInline
        return _name(self.const(self._static(value)))

    def visit_Attribute(self, node):
        node = self.generic_visit(node)
        if isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name):
            module = self.lookup(node.value.id)
            if isinstance(module, types.ModuleType) or any(module is ns for ns in
                                                            _xp._namespaces):
                return _name(self.const(self._static(getattr(module, node.attr))))
        return node

    def visit_Call(self, node):
        node = self.generic_visit(node)
        if isinstance(node.func, ast.Name) and not node.keywords:
            fn = self.lookup(node.func.id)
            resolved = _resolved(fn, node.args, self.lookup) if fn is not None else None
            if resolved is not None:
                target, args = resolved
                source = _expression(target, [ast.unparse(a) for a in args], self.const,
                                     self.lookup)
                return _parse(source) if source else ast.Call(
                    _name(self.const(target)), args, [])
        return node

    def visit_IfExp(self, node):
        node = self.generic_visit(node)
        if all(isinstance(n, (ast.Constant, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.cmpop,
                              ast.boolop, ast.unaryop, ast.expr_context))
               for n in ast.walk(node.test)):
            test = eval(compile(ast.Expression(node.test), "<test>", "eval"),  # (literals only)
                        {"__builtins__": {}})
            return node.body if test else node.orelse
        return node
