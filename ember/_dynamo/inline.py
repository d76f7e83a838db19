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
  a constant, and ``xp.multiply(a, b)`` on an ndarray ``a`` is ``a * b``;
- a test the recording decides (``_known``: on literals, on the types, shapes, dtypes and
  strides of the arrays, which every replay's arrays share with the recording's, or a call
  of a function marked ``ember._recording.on_metadata``) is decided: ``alpha == 1``,
  ``x.ndim``, ``_numpy_pair(g, ans)``;
- an argument that is not a name or a literal is not read twice, and a call of another such
  function on names and literals is written out in its place.

Where the call is a line's whole value (``block``), a ``def`` of several statements is
written out too (``_Block``): assignments to its locals (renamed ``_l0``, ``_l1``...), in-place
operators, calls, and ``if`` statements whose tests the recording decides, each statement
whose value is a call of another such function written out before it. ``statement`` makes
the line: the local the function returns becomes the line's slot. A rule that builds its
result in one buffer (``out = 1 - ans; out *= g``) is then replayed as those three NumPy
calls.

Anything else (a loop, a ``try``, a write into an item or an attribute, a comprehension, a
name it cannot resolve, a test on an array's values) is left a call. The code written out
computes what the call would, by the same NumPy calls in the same order, so replays stay
eager's results bit for bit.
"""
from __future__ import annotations

import ast
import builtins
import dis
import functools
import io
import itertools
import linecache
import re
import tokenize
import types

import numpy as np

from .. import _xp

__all__ = ["expression", "renamed", "statement"]

# (what a name may hold to be made a constant: things nothing writes; ``type(np.sum)``: NumPy's
# dispatcher of a Python-level function)
_STATIC = (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type, np.ufunc,
           type(np.sum), functools.partial, int, float, bool, str, type(None), np.dtype)
_SCOPED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
           ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)
# the statements a function written out whole may have (``_Block``)
_STATEMENTS = (ast.Assign, ast.AugAssign, ast.Expr, ast.Return, ast.If, ast.Pass)
_bodies = {}  # code object -> (parameter names, expression or statements) or None
# ufuncs whose call on an array is its operator: ``a * b`` is ``np.multiply(a, b)`` for an
# ndarray ``a`` (the same loop; the operator skips the call's argument parsing). Not ``**``:
# ``a ** 2`` takes NumPy's fast path (``square``), another function.
_OPERATORS = {np.add: ast.Add, np.subtract: ast.Sub, np.multiply: ast.Mult,
              np.true_divide: ast.Div, np.matmul: ast.MatMult}


def expression(fn, args, const, lookup, memo=None, block=False):
    """Source of ``fn(*args)`` written out, or None where ``fn`` is not a one-expression
    function of resolvable names. ``args``: sources; ``const(obj)``: a constant's name;
    ``lookup(name)``: the object a constant's or a slot's name stands for (None for any other
    name). ``memo``: a dict kept by the caller (one recording, whose constants' names stay)
    for calls alike but for their slots (a layer's rules in each step of an unrolled RNN):
    written out once with placeholders, the slots' names put in after."""
    if memo is None:
        return _expression(fn, args, const, lookup, block)
    slots, key = {}, [fn, block]
    for a in args:
        if _SLOT.fullmatch(a):
            array = lookup(a)
            key.append((type(array), getattr(array, "dtype", None),
                        getattr(array, "shape", None)))
            slots[f"__p{len(slots)}__"] = a
            continue
        key.append(a)
    key = tuple(key)
    if key not in memo:
        holders = iter(slots)
        memo[key] = _expression(
            fn, [next(holders) if _SLOT.fullmatch(a) else a for a in args], const,
            lambda name: lookup(slots.get(name, name)), block)
    template = memo[key]
    return template and _HOLDER.sub(lambda m: slots[m.group(0)], template)


_SLOT = re.compile(r"s\d+")
_HOLDER = re.compile(r"__p\d+__")


def _expression(fn, args, const, lookup, block=False, names=None, depth=0):
    """``expression`` without the memo. ``block``: a function of several statements may be
    written out too (where its call is a whole statement); ``names``: the counter that names
    the locals of the calls written out within one, ``depth`` how deep in them this is."""
    if depth > _DEEPEST:
        return None
    resolved = (_resolved(fn, [_parse(a) for a in args], lookup)
                if hasattr(fn, "resolve") else None)
    if resolved is not None:
        fn, nodes = resolved
        args = [ast.unparse(a) for a in nodes]
        return (_expression(fn, args, const, lookup, block, names, depth)
                or f"{const(fn)}({', '.join(args)})")
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
    for name, node in given.items():  # (``(False, True)[1]``: a literal)
        if not _atomic(node) and _LITERAL.match(ast.unparse(node)):
            value = _known(node, lookup)
            if value is not _UNKNOWN and type(value) in (bool, int, float, str, type(None)):
                given[name] = ast.Constant(value)
    for name, value in zip(params[len(args):], defaults[len(defaults) - missing:]):
        if not isinstance(value, _STATIC):
            return None
        given[name] = _name(const(value))
    if code.co_flags & 0x08:  # (``**kwargs``: none, as recorded calls pass)
        given[code.co_varnames[code.co_argcount]] = ast.Dict(keys=[], values=[])
    if block:  # (a one-expression function too: a call that is its value may be a block)
        try:
            return _Block(fn, given, const, lookup, itertools.count() if names is None
                          else names, depth).write(body if isinstance(body, list) else
                                                   [ast.Return(body)])
        except _CannotInline:
            return None
    if isinstance(body, list):
        return None
    uses = {}
    for node in ast.walk(body):
        if isinstance(node, ast.Name) and node.id in given:
            uses[node.id] = uses.get(node.id, 0) + 1
    if any(n > 1 and not _atomic(given[p]) for p, n in uses.items()):
        return None  # (an expression argument would be computed twice)
    try:
        tree = _Substitute(fn, given, const, lookup, depth).visit(_copy(body))
    except _CannotInline:
        return None
    return ast.unparse(ast.fix_missing_locations(tree))


def statement(target, source):
    """The code of ``target = source`` (``target`` None: of ``source`` alone), ``source``
    being what ``expression`` wrote: an expression, or a function's statements then its
    result on the last line. A result that is one of its locals is named ``target`` from
    its first statement on; its other locals are deleted after it."""
    if "\n" not in source:
        return source if target is None else f"{target} = {source}"
    *lines, result = source.split("\n")
    body = "\n".join(lines)
    if target is not None and _LOCAL.fullmatch(result) and _SLOT.fullmatch(target):
        body, result = renamed(body, {result: target}), None
    elif target is not None:
        body += f"\n{target} = {result}"
    elif not _LOCAL.fullmatch(result):
        body += f"\n{result}"
    dead = sorted(set(_LOCAL.findall(body)), key=lambda n: int(n[2:]))
    return body + (f"\ndel {', '.join(dead)}" if dead else "")


def renamed(code, names):
    """``code`` with the names in ``names`` renamed (Python name tokens only)."""
    if not names:
        return code
    tokens = tokenize.generate_tokens(io.StringIO(code).readline)
    return tokenize.untokenize(
        (t.type, names.get(t.string, t.string) if t.type == tokenize.NAME else t.string,
         t.start, t.end, t.line) for t in tokens).rstrip("\n")


_LOCAL = re.compile(r"(?<![\w.])_l\d+\b")  # (a whole name: not in another)
_LITERAL = re.compile(r"[(\[]")  # (a tuple or list, maybe subscripted: worth deciding)
_DEEPEST = 4  # functions written out within one another


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
    if code.co_flags & (0x04 | 0x20 | 0x80 | 0x100 | 0x200):  # (*args, generator, coroutine,
        return None  # async): not one plain expression; ``**kwargs`` are given none
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
        if len(stmts) == 1 and isinstance(stmts[0], ast.Return) and stmts[0].value is not None:
            body = stmts[0].value
        else:
            body = _Statements.of(stmts)  # (several statements: ``_Block``)
            if body is None:
                return None
    if any(isinstance(n, _SCOPED) for n in ast.walk(ast.Module(body, []) if isinstance(
            body, list) else body)):
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


def _clone(node):
    """A copy of the tree ``node`` (the transformers below write into what they visit)."""
    if isinstance(node, list):
        return [_clone(n) for n in node]
    if not isinstance(node, ast.AST):
        return node
    new = node.__class__()
    for field, value in ast.iter_fields(node):
        setattr(new, field, _clone(value))
    return new


_copy = _clone


def _atomic(node):
    """Whether ``node`` may be read twice: a name, a literal (``-1`` too), tuples of them."""
    return isinstance(node, (ast.Name, ast.Constant)) or isinstance(
        node, ast.Dict) and not node.keys or isinstance(
        node, (ast.Tuple, ast.List)) and all(_atomic(e) for e in node.elts) or isinstance(
        node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(
        node.operand, ast.Constant)


def _name(source):
    return ast.Name(id=source, ctx=ast.Load())


class _Substitute(ast.NodeTransformer):
    """Parameters replaced by their arguments, free names by constants, ``xp.f`` by ``f``,
    tests on literals decided."""

    def __init__(self, fn, given, const, lookup, depth=0):
        self.fn, self.given, self.const, self.lookup = fn, given, const, lookup
        self.depth = depth  # (how deep in functions written out within one another)
        self.locals = {}  # a local name -> its name written out (``_Block``)
        code = fn.__code__
        self.cells = dict(zip(code.co_freevars, fn.__closure__ or ()))

    def _static(self, obj):
        if not isinstance(obj, _STATIC) and not any(obj is ns for ns in _xp._namespaces):
            raise _CannotInline
        return obj

    def visit_Name(self, node):
        if node.id in self.locals:
            return ast.Name(id=self.locals[node.id], ctx=node.ctx)
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
            if getattr(fn, "on_metadata", False):
                value = _known(node, self.lookup)
                if value is not _UNKNOWN and not (type(value) is np.ndarray
                                                  and value.flags.writeable):
                    return _literal(value, self.const)  # (a cached read-only array: a constant)
            operator = _OPERATORS.get(fn) if type(fn) is np.ufunc else None
            if (operator is not None and len(node.args) == 2
                    and isinstance(node.args[0], ast.Name)
                    and type(self.lookup(node.args[0].id)) is np.ndarray):
                return ast.BinOp(node.args[0], operator(), node.args[1])
            resolved = _resolved(fn, node.args, self.lookup) if fn is not None else None
            if resolved is not None:
                target, args = resolved
                source = _expression(target, [ast.unparse(a) for a in args], self.const,
                                     self.lookup, depth=self.depth + 1)
                return _parse(source) if source else ast.Call(
                    _name(self.const(target)), args, [])
            if (type(fn) is types.FunctionType and not getattr(fn, "on_metadata", False)
                    and all(_atomic(a) for a in node.args)):  # (so none is computed twice)
                source = _expression(fn, [ast.unparse(a) for a in node.args], self.const,
                                     self.lookup, depth=self.depth + 1)
                if source:
                    return _parse(source)
        return node

    def visit_IfExp(self, node):
        node = self.generic_visit(node)
        test = _known(node.test, self.lookup)
        if test is _UNKNOWN:
            return node
        return node.body if test else node.orelse


class _Statements(list):
    """A function's statements that ``_Block`` may write out, with the names they assign."""

    assigned = frozenset()

    @classmethod
    def of(cls, stmts):
        """``stmts`` as one, or None where one is not of ``_STATEMENTS`` or assigns to
        anything but a plain name (unpacking, an attribute, an item)."""
        nodes = [n for st in stmts for n in ast.walk(st)]
        if not stmts or any(isinstance(n, ast.stmt) and not isinstance(n, _STATEMENTS) or
                            isinstance(n, ast.Assign) and (len(n.targets) != 1 or
                                                           type(n.targets[0]) is not ast.Name)
                            or isinstance(n, ast.AugAssign) and type(n.target) is not ast.Name
                            for n in nodes):
            return None
        out = cls(stmts)
        out.assigned = frozenset(n.targets[0].id if isinstance(n, ast.Assign) else n.target.id
                                 for n in nodes if isinstance(n, (ast.Assign, ast.AugAssign)))
        return out


class _Block(_Substitute):
    """A function of several statements written out: its statements, its locals named
    ``_l0``, ``_l1``... (``names``: fresh within the line written), the ``if`` statements
    decided (``_known``: on the arguments' types, shapes and dtypes, or literals; a test the
    recording cannot decide leaves the call a call), each statement whose value is a call
    of another such function written out in its place, the same way. ``write`` gives the
    lines, then the result."""

    def __init__(self, fn, given, const, lookup, names, depth):
        # local -> what the recording knows it holds: a decided Python value (``n =
        # x.ndim``), or the array (as recorded) it is a view of, for its facts (``a = g.T``)
        self.facts = {}
        super().__init__(fn, given, const,
                         lambda name: self.facts.get(name) if name in self.facts
                         else lookup(name), depth)
        self.names = names
        self.lines = []
        self.result = "None"

    def write(self, stmts):
        """``stmts``: a ``_Statements`` (the function's own, never written to: each node is
        cloned as it is visited), or a list of one ``return``."""
        assigned = getattr(stmts, "assigned", ())
        for name, node in list(self.given.items()):  # (arguments, in order: computed once)
            if name in assigned or not _atomic(node):
                array = None if name in assigned else _array(node, self.lookup)
                value = self._expand(node)
                if _LOCAL.fullmatch(value) and not _atomic(node):
                    self.locals[name] = value  # (a local of an argument's own: this one's)
                else:
                    local = self.locals[name] = f"_l{next(self.names)}"
                    self.lines.append(f"{local} = {value}")
                if array is not None:  # (``s3.T``: its facts, for the tests on it)
                    self.facts[self.locals[name]] = array
                del self.given[name]
        for name in sorted(assigned - self.locals.keys()):
            self.locals[name] = f"_l{next(self.names)}"
        self._statements(stmts)
        return "\n".join([*self.lines, self.result])

    def _statements(self, stmts):
        """Write ``stmts`` out; whether they returned."""
        for st in stmts:
            if isinstance(st, ast.If):
                test = _known(self.visit(_clone(st.test)), self.lookup)
                if test is _UNKNOWN:
                    raise _CannotInline
                if self._statements(st.body if test else st.orelse):
                    return True
            elif isinstance(st, ast.Return):
                self.result = "None" if st.value is None else self._value(st.value)
                return True
            elif isinstance(st, ast.Assign):
                target, value = self.locals[st.targets[0].id], self._value(st.value)
                self.facts.pop(target, None)
                if value != target:
                    self.lines.append(f"{target} = {value}")
                    known = _parse(value)
                    array, decided = _array(known, self.lookup), _known(known, self.lookup)
                    if array is not None or decided is not _UNKNOWN and _immutable(decided):
                        self.facts[target] = decided if array is None else array
            elif isinstance(st, ast.AugAssign):
                self.facts.pop(self.locals[st.target.id], None)
                self.lines.append(ast.unparse(ast.AugAssign(
                    ast.Name(id=self.locals[st.target.id], ctx=ast.Store()), st.op,
                    self.visit(_clone(st.value)))))
            elif isinstance(st, ast.Expr):
                value = self._value(st.value)
                if not _atomic(_parse(value)):
                    self.lines.append(value)
            elif not isinstance(st, ast.Pass):
                raise _CannotInline
        return False

    def _value(self, node):
        """The source of ``node``'s value (``_expand``)."""
        return self._expand(self.visit(_clone(node)))

    def _expand(self, node):
        """The source of ``node`` (written out already); a call of a function that can be
        written out is, its statements going before (also under an attribute: ``f(x).T``)."""
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Call):
            value = self._expand(node.value)
            if not _atomic(_parse(value)):
                local = f"_l{next(self.names)}"
                self.lines.append(f"{local} = {value}")
                value = local
            return f"{value}.{node.attr}"
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args)):
            fn = self.lookup(node.func.id)
            if type(fn) is types.FunctionType and not getattr(fn, "on_metadata", False):
                source = _expression(fn, [ast.unparse(ast.fix_missing_locations(a))
                                          for a in node.args],
                                     self.const, self.lookup, True, self.names, self.depth + 1)
                if source is not None:
                    *lines, result = source.split("\n")
                    self.lines.extend(lines)
                    return result
        return ast.unparse(ast.fix_missing_locations(node))


# --------------------------------------------------------------------------- decided tests

_UNKNOWN = object()
# what a replay's arrays share with the recording's (the guards hold the inputs' strides, and
# a slot reused in place has the strides of the result it stands for: ``inplace.py``)
_FACTS = ("ndim", "shape", "dtype", "size", "itemsize", "strides")
_VIEWS = ("T", "mT")  # (an array's transpose: its facts are the array's, reordered)
_PLAIN = (bool, int, float, str, type(None), np.dtype, type, np.generic)
_TESTS = (type, len, isinstance)


class _Array:
    """An array whose type, shape and dtype a test may read (a replay's array has the
    recording's), not its values."""

    def __init__(self, array):
        self.array = array


def _array(node, lookup):
    """The array (as recorded) that ``node`` stands for, where it is a slot or a view of one
    named by ``_VIEWS``, for its facts; None otherwise."""
    try:
        value = _evaluate(node, lookup)
    except Exception:  # (_CannotInline, or a test that would raise: left to the replay)
        return None
    return value.array if isinstance(value, _Array) else None


def _known(node, lookup):
    """The value of the expression ``node`` where the recording decides it for every replay:
    made of literals and immutable constants, the ``_FACTS`` of arrays (a slot's, a constant
    array's), ``type``/``len``/``isinstance`` of them, calls of functions marked
    ``on_metadata`` (``ember._recording``: they read only those facts), comparisons and
    boolean operators; ``_UNKNOWN`` otherwise."""
    try:
        value = _evaluate(node, lookup)
    except Exception:  # (_CannotInline, or a test that would raise: left to the replay)
        return _UNKNOWN
    return _UNKNOWN if isinstance(value, _Array) else value


def _evaluate(node, lookup):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        obj = lookup(node.id)
        if obj is None:
            raise _CannotInline
        if type(obj) is np.ndarray:
            return _Array(obj)
        if type(obj) is tuple and _immutable(obj):  # (an input's (shape, dtype))
            return obj
        if (isinstance(obj, _PLAIN) or any(obj is t for t in (*_TESTS, *_xp._namespaces))
                or getattr(obj, "on_metadata", False)):
            return obj
        raise _CannotInline
    if isinstance(node, ast.Attribute) and node.attr in (*_FACTS, *_VIEWS):
        obj = _evaluate(node.value, lookup)
        if isinstance(obj, _Array):
            value = getattr(obj.array, node.attr)
            return _Array(value) if node.attr in _VIEWS else value
        raise _CannotInline
    if isinstance(node, ast.Tuple):
        return tuple(_plain(_evaluate(e, lookup)) for e in node.elts)
    if isinstance(node, ast.Dict) and not node.keys:
        return {}  # (no ``**kwargs``)
    if isinstance(node, ast.Subscript):
        return _plain(_evaluate(node.value, lookup))[_plain(_evaluate(node.slice, lookup))]
    if isinstance(node, ast.Call) and not node.keywords:
        fn = _evaluate(node.func, lookup)
        args = [_evaluate(a, lookup) for a in node.args]
        if any(fn is t for t in _TESTS):
            return fn(*[a.array if isinstance(a, _Array) else a for a in args])
        if getattr(fn, "on_metadata", False):
            return _plain(fn(*[a.array if isinstance(a, _Array) else a for a in args]))
        raise _CannotInline
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _plain(_evaluate(node.left, lookup)), _plain(_evaluate(node.right, lookup))
        if not all(type(v) in (int, bool, tuple) for v in (left, right)):
            raise _CannotInline  # (sizes and shapes: no rounding to reproduce)
        return _ARITHMETIC[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
        value = _plain(_evaluate(node.operand, lookup))
        return not value if isinstance(node.op, ast.Not) else -value
    if isinstance(node, ast.BoolOp):  # (Python's: the operand that decided, in order)
        for v in node.values:
            value = _plain(_evaluate(v, lookup))
            if bool(value) is not isinstance(node.op, ast.And):
                return value
        return value
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left = _evaluate(node.left, lookup)
        right = _evaluate(node.comparators[0], lookup)
        op = node.ops[0]
        if isinstance(op, (ast.Is, ast.IsNot)):
            # (identity with None, or of objects the recording holds: types, dtypes,
            # namespaces; not of numbers, strings or tuples, which a parse may make anew)
            if not (left is None or right is None or all(
                    isinstance(v, (type, np.dtype, bool)) or any(v is ns for ns in
                                                                 _xp._namespaces)
                    for v in (left, right))):
                raise _CannotInline
            same = left is right  # (an array is never None)
            return same if isinstance(op, ast.Is) else not same
        return _COMPARE[type(op)](_plain(left), _plain(right))
    raise _CannotInline


def _immutable(value):
    return isinstance(value, _PLAIN) or type(value) is tuple and all(map(_immutable, value))


def _plain(value):
    if isinstance(value, _Array):
        raise _CannotInline  # (an array's values are not the recording's to decide)
    return value


_COMPARE = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
            ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b,
            ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
            ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b,
            ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}


_ARITHMETIC = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
               ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b}


def _literal(value, const):
    """``value`` (decided) in code: a literal, or a constant's name."""
    if type(value) in (bool, int, float, str, type(None)):
        return ast.Constant(value)
    if isinstance(value, tuple) and all(type(v) in (bool, int, str, type(None)) for v in value):
        return ast.Constant(value)
    return _name(const(value))
