"""The op call's one fast path: ``_FastOp``, the class of ops of one output and one to three
inputs, whose call is generated once, at import, from the template ``_CALL`` below.

``_CALL`` is the general call (``Op.__call__``: ``_call``, ``_record``, ``_node``, ``_result``)
for the common case only: no interposer active, NumPy-backed tensor inputs of one dtype, or
(two inputs) a tensor and a Python number that does not change its dtype. Three inputs are
``addmm``'s (each ``Linear`` of a small model: 4 us of its 15 in the general call) and the
like: all tensors, or the general call. Anything else goes to
``Op.__call__``. The node, its edges and its result are made by the general path's own
functions (``Op._node``, ``_edge``, ``_result``), inlined: ``_inline`` copies their bodies from
their source, so a new node field is still written once, in ``_op.py``, and the fast call pays
no Python call for them (a call costs more than what they do, once per op). The test
``tests/autograd/test_node_fast_path.py`` checks the nodes equal the general path's, field by
field.

The template is written once for every number of inputs: a line ending in a tag ``#`` and
digits is kept only for those numbers of inputs (``#1``: one, ``#23``: two and three);
``{inputs}`` are the call's inputs. It reads the names of
``_op.py``, the general call's module (a copy of its namespace, taken at import).
"""
from __future__ import annotations

import ast
import inspect
import linecache
import os
import re
import textwrap

from . import _op
from ._op import Op, _edge, _result

__all__ = ["_FastOp"]

_CALL = '''\
def __call__(self, {inputs}, *params):
    Tensor = _Tensor
    if _dispatching.active or not isinstance(a, Tensor):
        return Op.__call__(self, {inputs}, *params)
    da = a._data
    dtype = da.dtype
    if type(da) is not _ndarray or (self.promote == "float" and
                                    type(dtype) not in _INEXACT) or type(dtype) in _LOWP:
        return Op.__call__(self, {inputs}, *params)
    try:
        if isinstance(b, Tensor):  #23
            db = b._data  #23
            if b._base is not None and b._vc[0] != b._vv and _state.grad and self.rules:  #23
                fresh(b)  #23
            b_rg = b._rg  #23
            dtype_b = db.dtype  #23
            if (type(db) is not _ndarray or self.promote and dtype_b is not dtype  #23
                    or type(dtype_b) in _LOWP):  #23
                return Op.__call__(self, {inputs}, *params)  #23
        elif type(b) is float or type(b) is int:  #2
            db = b  #2
            b_rg = False  #2
            if self.promote and type(dtype) not in _INEXACT and (  #2
                    type(b) is float or dtype.kind not in "iu"):  #2
                # (an int beside an integer tensor keeps its dtype: ``_operands``  #2
                # brought it into the dtype's range; ``i + 8`` comes this way)  #2
                return Op.__call__(self, a, b, *params)  #2
        else:  #23
            return Op.__call__(self, {inputs}, *params)  #23
        if not isinstance(c, Tensor):  #3
            return Op.__call__(self, a, b, c, *params)  #3
        dc = c._data  #3
        if c._base is not None and c._vc[0] != c._vv and _state.grad and self.rules:  #3
            fresh(c)  #3
        c_rg = c._rg  #3
        dtype_c = dc.dtype  #3
        if (type(dc) is not _ndarray or self.promote and dtype_c is not dtype  #3
                or type(dtype_c) in _LOWP):  #3
            return Op.__call__(self, a, b, c, *params)  #3
        out = self.forward(_NUMPY, da, *params) if params else self.forward(_NUMPY, da)  #1
        out = (self.forward(_NUMPY, da, db, *params) if params else  #2
               self.forward(_NUMPY, da, db))  #2
        out = (self.forward(_NUMPY, da, db, dc, *params) if params else  #3
               self.forward(_NUMPY, da, db, dc))  #3
    except (ValueError, TypeError):
        return Op.__call__(self, {inputs}, *params)  # again, to raise PyTorch's error
    if type(out) is not _ndarray:
        if not isinstance(out, np.generic):  # another kind of array (a copy to the GPU)
            return Op.__call__(self, {inputs}, *params)
        out = np.asarray(out)  # NumPy gives scalars for 0-d results
    if a._base is not None and a._vc[0] != a._vv and _state.grad and self.rules:
        fresh(a)
    a_rg = a._rg
    out_dtype = out.dtype
    if not a_rg or not _state.grad or self.rules is None or (  #1
    if not (a_rg or b_rg) or not _state.grad or self.rules is None or (  #2
            out_dtype is not dtype and type(out_dtype) not in _INEXACT):  #12
    if not (a_rg or b_rg or c_rg) or not _state.grad or self.rules is None or (  #3
            type(out_dtype) not in _INEXACT):  #3
        return Tensor._make(out, None, False)
    # What ``_record`` finds, for these inputs: the save plan (per requires-grad mask, its top
    # bit the number of inputs), edges, metadata, what the rules read, and each saved tensor
    # with its version (a Python number ``b`` has none).
    _, _, save_ans, (keep_a,) = self._plans.get(3) or self._save_plan(3, 1)  #1
    mask = a_rg | b_rg << 1 | 4  #2
    _, _, save_ans, (keep_a, keep_b) = self._plans.get(mask) or self._save_plan(mask, 2)  #2
    mask = a_rg | b_rg << 1 | c_rg << 2 | 8  #3
    _, kept, save_ans, (keep_a, keep_b, keep_c) = (self._plans.get(mask) or  #3
                                                   self._save_plan(mask, 3))  #3
    inputs = ((0, a, a._vc[0]),) if keep_a else ()  #12
    edge_a = _edge(a)  #1
    nexts = (edge_a,)  #1
    meta = [(da.shape, dtype)]  #1
    saved = [da if keep_a else None, *params]  #1
    frees = keep_a or save_ans  #1
    edge_a = edge_b = _NO_EDGE  #2
    edge_a = edge_b = edge_c = _NO_EDGE  #3
    meta_a = meta_b = None  #2
    meta_a = meta_b = meta_c = None  #3
    if a_rg:  #23
        edge_a = _edge(a)  #23
        meta_a = (da.shape, dtype)  #23
    if b_rg:  #23
        edge_b = _edge(b)  #23
        meta_b = (db.shape, dtype_b)  #23
    if c_rg:  #3
        edge_c = _edge(c)  #3
        meta_c = (dc.shape, dtype_c)  #3
    nexts = (edge_a, edge_b)  #2
    meta = [meta_a, meta_b]  #2
    saved = [da if keep_a else None, db if keep_b else None, *params]  #2
    if keep_b and b is not db:  #2
        inputs = (((1, b, b._vc[0]),) + inputs if self._b_first else  #2
                  inputs + ((1, b, b._vc[0]),))  #2
    frees = keep_a or keep_b or save_ans  #2
    nexts = (edge_a, edge_b, edge_c)  #3
    meta = [meta_a, meta_b, meta_c]  #3
    saved = [da if keep_a else None, db if keep_b else None, dc if keep_c else None,  #3
             *params]  #3
    abc = (a, b, c)  #3
    inputs = tuple([(i, abc[i], abc[i]._vc[0]) for i in kept])  # (in PyTorch's order)  #3
    frees = keep_a or keep_b or keep_c or save_ans  #3
    ans = out if save_ans else None
    node = _node(self, nexts, meta, saved, inputs, ans, frees)
    return _result(node, out)
'''

# The general path's functions the template calls, inlined where it calls them.
_INLINED = {"_edge": _edge, "_node": Op._node, "_result": _result}


def _inline(fn, args, target, indent):
    """The body of ``fn`` (a function ending in its one ``return``) as statements, with its
    parameters renamed to ``args`` (names), its other locals given a prefix of its name (they
    cannot clash with the caller's), and its result assigned to ``target``, or returned."""
    func = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
    body = func.body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    *statements, last = body
    if not isinstance(last, ast.Return) or any(
            isinstance(n, ast.Return) for s in statements for n in ast.walk(s)):
        raise TypeError(f"{fn.__qualname__}: only a function ending in its one return inlines")
    params = [p.arg for p in func.args.args]
    names = dict(zip(params, args))
    prefix = f"_{fn.__name__.strip('_')}_"
    names.update((n.id, prefix + n.id) for s in body for n in ast.walk(s)
                 if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id not in names)
    for s in body:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and n.id in names:
                n.id = names[n.id]
    result = ast.unparse(last.value)
    lines = [ast.unparse(s) for s in statements]
    lines.append(f"return {result}" if target is None else f"{target} = {result}")
    return textwrap.indent("\n".join(lines), indent)


_CALL_LINE = re.compile(r"^(\s*)(?:(\w+) = |return )(\w+)\(([\w, ]*)\)$")


def _generate(n_in):
    """The fast call of ops of ``n_in`` inputs, from ``_CALL``."""
    lines = []
    for line in _CALL.format(inputs=", ".join("abc"[:n_in])).splitlines():
        code, _, tag = line.rpartition("  #")
        if tag.isdigit():
            if str(n_in) not in tag:
                continue
            line = code
        m = _CALL_LINE.match(line)
        if m and m[3] in _INLINED:
            indent, target, name, args = m.groups()
            try:
                line = _inline(_INLINED[name], [a.strip() for a in args.split(",")], target,
                               indent)
            except OSError:  # no source to read (a frozen install): the call stays a call
                pass
        lines.append(line)
    source = "\n".join(lines) + "\n"
    # (named as a file of this package, so that anomaly mode's stacks leave it out as ember's)
    name = f"<fast path, {n_in} input{'s' if n_in > 1 else ''}>"
    filename = os.path.join(os.path.dirname(__file__), name)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = dict(vars(_op))  # the general call's names: the template is its code
    namespace.update(_INLINED)  # (for calls left as calls)
    for fn in _INLINED.values():  # (and the inlined bodies read their own module's names)
        for name in fn.__code__.co_names:
            if name in fn.__globals__ and namespace.setdefault(
                    name, fn.__globals__[name]) is not fn.__globals__[name]:
                raise NameError(f"{name} means two things to the fast path")
    exec(compile(source, filename, "exec"), namespace)  # (our own template, see above)
    call = namespace["__call__"]
    clash = set(call.__code__.co_varnames) & {
        name for fn in _INLINED.values() for name in fn.__code__.co_names
        if name in fn.__globals__}
    if clash:  # a local of the template would hide a name an inlined body reads
        raise NameError(f"the fast path's locals {sorted(clash)} hide the inlined code's names")
    return call


class _FastOp(Op):
    """An op of one output and one to three inputs: its call is the fast path (``_CALL``) for
    its number of inputs (the subclass ``__new__`` picks), the general one otherwise."""

    def __new__(cls, name, forward, n_in, *args, **kwargs):
        if cls is _FastOp:
            inputs = forward.__code__.co_argcount - 1 if n_in is None else n_in
            cls = _FAST_OPS[inputs]
        return super().__new__(cls)


_FAST_OPS = {n: type(f"_FastOp{n}", (_FastOp,), {"__call__": _generate(n)})
             for n in (1, 2, 3)}
