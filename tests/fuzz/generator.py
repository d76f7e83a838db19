"""Seeded random programs for the differential fuzzer.

A program is a list of ``Stmt``: one line of Python each, over the names ``torch`` and ``np``
only. Running it on ember means exec'ing the lines with ``torch=ember``; on PyTorch with
``torch=torch``. The leaves are built from NumPy array literals written into the source, so
both libraries get identical inputs, and ``Program.source()`` is a runnable reproduction.

Names: leaves ``a0..a2``; results ``t0, t1, ...``; the backward stage's results ``g0``, ``h0``.

Generation runs each candidate line on PyTorch as it goes (PyTorch is the shape and dtype
oracle): ops are drawn from ``optable.TABLE`` with arguments fitted to the live tensors, and a
line that raises on PyTorch is usually dropped and redrawn — only now and then kept as the
program's last line, so error paths are tested without wasting most programs on them.
Everything random comes from ``random.Random(seed)``: the same seed gives the same program.
"""
from __future__ import annotations

import math
import random
import re
import warnings
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import torch

NAME_RE = re.compile(r"\b([atgh]\d+)\b")
_ASSIGN_RE = re.compile(r"^(?:with torch\.no_grad\(\): )?([atgh]\d+) = ")

MAX_NUMEL = 4096        # candidates making anything bigger are redrawn
MAX_NDIM = 6
P_KEEP_ERROR = 0.06     # chance that a candidate line raising on PyTorch is kept (and ends it)
P_BACKWARD = 0.85       # chance of a backward stage when some output requires grad

Operand = namedtuple("Operand", ["expr", "val"])  # source text and the live PyTorch value


@dataclass
class Stmt:
    code: str               # one line of Python over ``torch`` and ``np``
    op: str                 # the table entry that wrote it ("add", "view", ...), or "leaf" etc.
    stage: str = "op"       # "leaf" | "op" | "backward"

    @property
    def defines(self):
        """The name this line assigns, or None (in-place ops, writes, ``backward()``)."""
        m = _ASSIGN_RE.match(self.code)
        return m.group(1) if m else None

    @property
    def uses(self):
        """Names the line reads (for an in-place line the first is the one written to)."""
        names = NAME_RE.findall(self.code)
        if self.defines:
            names = names[1:]
        return tuple(dict.fromkeys(names))


@dataclass
class Program:
    seed: int
    stmts: list

    def source(self, mark=None, note="", extra=()):
        """Runnable Python (``import torch`` on top); line ``mark`` gets ``note`` as a comment
        and the lines ``extra`` after it."""
        lines = ["import numpy as np", "import torch", ""]
        for i, s in enumerate(self.stmts):
            lines.append(s.code)
            if i == mark:
                lines.extend("# ^ " + n for n in note.splitlines())
                lines.extend(extra)
        return "\n".join(lines) + "\n"

    def with_stmts(self, stmts):
        return Program(self.seed, list(stmts))


# ---- literals -----------------------------------------------------------------------------

def lit(v):
    """A Python literal for a scalar (NaN and infinities as ``float(...)`` calls)."""
    if isinstance(v, (bool, np.bool_)):
        return repr(bool(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if math.isnan(v):
            return "float('nan')"
        if math.isinf(v):
            return "float('inf')" if v > 0 else "-float('inf')"
        return repr(v)
    return repr(int(v))


def nested(values):
    """A nested-list literal of ``values`` (an ndarray's ``tolist()`` or a scalar)."""
    if isinstance(values, list):
        return "[" + ", ".join(nested(v) for v in values) + "]"
    return lit(values)


NP_DTYPE = {"float32": "np.float32", "float64": "np.float64", "int64": "np.int64",
            "bool": "np.bool_"}


def np_literal(values, shape, dtype):
    """Source for a NumPy array of ``shape``/``dtype`` from flat Python ``values`` (written as
    drawn: ``np.array`` rounds them to ``dtype`` the same way for both libraries)."""
    dt = NP_DTYPE[dtype]
    if 0 in shape:
        return f"np.zeros({tuple(shape)!r}, dtype={dt})"
    body = nested(np.array(values, dtype=object).reshape(shape).tolist()) if shape else \
        lit(values[0])
    return f"np.array({body}, dtype={dt})"


def torch_literal(values, shape, dtype):
    """Source for a constant tensor (``values`` flat Python scalars) of ``shape``/``dtype``."""
    if 0 in shape:
        return f"torch.zeros({tuple(shape)!r}, dtype=torch.{dtype})"
    arr = np.array(values, dtype=object).reshape(shape)
    body = nested(arr.tolist()) if shape else lit(values[0])
    return f"torch.tensor({body}, dtype=torch.{dtype})"


def _is_tensor(v):
    return isinstance(v, torch.Tensor)


def attr(v, name):
    """``v.name``, or None where reading it raises (PyTorch raises reading ``grad_fn`` or
    ``is_leaf`` of a view made under no_grad whose base was then modified in place)."""
    try:
        return getattr(v, name)
    except RuntimeError:
        return None


# ---- the generator ------------------------------------------------------------------------

class Gen:
    """The state of one program being written, and the helpers the op table calls."""

    def __init__(self, seed):
        self.seed = seed
        self.r = random.Random(seed)
        self.stmts = []
        self.n_t = 0
        self._replay()

    # -- running candidates on PyTorch --
    def _fresh_ns(self):
        return {"torch": torch, "np": np}

    def _replay(self):
        self.ns = self._fresh_ns()
        for s in self.stmts:
            self._exec(s.code)

    def _exec(self, code):
        """Run one line on PyTorch; the exception it raised, or None."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec(code, self.ns)  # noqa: S102 - the fuzzer's own generated code
        except Exception as e:  # noqa: BLE001
            return e
        return None

    def _too_big(self):
        for op in self.operands():
            if op.val.numel() > MAX_NUMEL or op.val.dim() > MAX_NDIM:
                return True
        return False

    def add(self, code, op, stage="op", keep_error=None):
        """Try ``code``; keep it if it runs (or, rarely, if it raises: then return 'error')."""
        err = self._exec(code)
        if err is None and not self._too_big():
            self.stmts.append(Stmt(code, op, stage))
            return "ok"
        if err is not None and self.r.random() < (P_KEEP_ERROR if keep_error is None
                                                  else keep_error):
            self.stmts.append(Stmt(code, op, stage))
            return "error"
        self._replay()  # a failed line may have half-applied: rebuild the namespace
        return "rejected"

    def new_name(self):
        return f"t{self.n_t}"

    # -- random helpers --
    def coin(self, p=0.5):
        return self.r.random() < p

    def choice(self, seq):
        return seq[self.r.randrange(len(seq))]

    def randint(self, a, b):
        return self.r.randint(a, b)

    def randrange(self, n):
        return self.r.randrange(n)

    def weighted(self, items, weights):
        return self.r.choices(items, weights)[0]

    # -- live values --
    def operands(self):
        """Every live tensor as an ``Operand``, oldest first (tuple elements as ``t3[0]``)."""
        out = []
        for name, v in self.ns.items():
            if not NAME_RE.fullmatch(name):
                continue
            if _is_tensor(v):
                out.append(Operand(name, v))
            elif isinstance(v, (tuple, list)):
                out.extend(Operand(f"{name}[{i}]", e) for i, e in enumerate(v) if _is_tensor(e))
        return out

    def pick(self, pred=None, prefer=None, p_prefer=0.5):
        """A random live tensor satisfying ``pred`` (recent ones and ones requiring grad
        likelier), or None.

        ``prefer``: a second predicate picked from with probability ``p_prefer`` when any
        tensor satisfies both (views as in-place targets, float tensors for math ops).
        """
        ops = [o for o in self.operands() if pred is None or pred(o.val)]
        if not ops:
            return None
        if prefer is not None and self.coin(p_prefer):
            pref = [o for o in ops if prefer(o.val)]
            if pref:
                ops = pref
        return self.r.choices(ops, [(i + 1) * (3 if o.val.requires_grad else 1)
                                    for i, o in enumerate(ops)])[0]

    # -- argument makers --
    def scalar(self, kind=None):
        """A Python scalar literal: int, float or bool."""
        kind = kind or self.weighted(["int", "float", "bool"], [4, 5, 1])
        if kind == "bool":
            return lit(self.coin())
        if kind == "int":
            return lit(self.choice([0, 1, 2, 3, -1, -2, 5]))
        return lit(self.choice([0.5, 2.0, -1.5, 1.0, 0.0, 3.25, -0.25, 1e-3, 2.5]))

    def values(self, n, dtype, special=False):
        """``n`` flat Python values for a tensor of ``dtype``."""
        r = self.r
        if dtype == "bool":
            return [r.random() < 0.5 for _ in range(n)]
        if dtype in ("int64", "int32"):
            return [r.choice([r.randint(-4, 5), r.randint(-4, 5), r.randint(-100, 100)])
                    for _ in range(n)]
        fine = r.random() < 0.4
        out = []
        for _ in range(n):
            if special and r.random() < 0.2:
                out.append(r.choice([math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-30, 1e30]))
            elif fine:
                out.append(round(r.uniform(-3, 3), 2))
            else:
                out.append(r.randint(-12, 12) / 4)
        return out

    def const(self, shape, dtype):
        """Source for a constant tensor of ``shape`` and ``dtype``."""
        n = int(np.prod(shape)) if shape else 1
        return torch_literal(self.values(n, dtype), tuple(shape), dtype)

    def dtype(self, weights=(4, 3, 2, 1)):
        return self.weighted(["float32", "float64", "int64", "bool"], weights)

    def shape(self):
        ndim = self.weighted([0, 1, 2, 3, 4], [1, 2, 3, 2, 1])
        return tuple(self.size() for _ in range(ndim))

    def size(self):
        return self.weighted([0, 1, 2, 3, 4, 5], [1, 6, 6, 5, 4, 3])

    def broadcastable(self, shape, into=False):
        """A shape broadcasting with ``shape`` (``into``: to exactly ``shape``)."""
        shape = list(shape)
        if shape and self.coin(0.4):
            shape = shape[self.randint(1, len(shape)):] if self.coin(0.5) else shape
        shape = [1 if self.coin(0.3) else s for s in shape]
        if not into and self.coin(0.15) and len(shape) < 4:
            shape = [self.choice([1, 2])] + shape
        return tuple(shape)

    def partner(self, x, into=False, scalar_p=0.35, dtype=None):
        """A second operand for ``x``: a Python scalar, a live tensor or a constant tensor that
        broadcasts with it (``into``: to ``x``'s shape); now and then one that does not."""
        if self.coin(scalar_p):
            return self.scalar({"int64": "int", "bool": "bool"}.get(dtype, dtype and "float"))
        shape = tuple(x.val.shape)

        def fits(v):
            try:
                b = torch.broadcast_shapes(tuple(v.shape), shape)
            except RuntimeError:
                return False
            return b == shape if into else True

        if self.coin(0.5):
            other = self.pick(lambda v: fits(v) and (dtype is None or str(v.dtype)[6:] == dtype))
            if other is not None:
                return other.expr
        if self.coin(0.03):
            return self.const(self.shape(), self.dtype())
        if self.coin(0.15):
            return self.const((), dtype or self.dtype())
        dt = dtype or (str(x.val.dtype)[6:] if self.coin(0.6) else self.dtype())
        return self.const(self.broadcastable(shape, into), dt)

    def dim(self, x, extra=0):
        """A dim of ``x`` in ``[-ndim-extra, ndim+extra-1]`` (0-d: 0 or -1); rarely out of range."""
        nd = max(x.val.dim() + extra, 1)
        if self.coin(0.02):
            return self.choice([nd, -nd - 1])
        return self.randint(-nd, nd - 1)

    def dims(self, x):
        """A tuple of distinct dims of ``x``."""
        nd = x.val.dim()
        if nd == 0:
            return (0,)
        k = self.randint(1, nd)
        return tuple(d - nd if self.coin(0.3) else d for d in self.r.sample(range(nd), k))

    def index(self, size, shape=None, distinct=False, nonneg=False):
        """An int64 index tensor literal with entries in ``[-size, size-1]`` (``nonneg``:
        ``[0, size-1]``; ``distinct``: no two entries point at the same position; ``shape``
        defaults to a short 1-d)."""
        if shape is None:
            shape = (self.randint(0 if distinct else 1, max(size, 1) if distinct else 4),)
        n = int(np.prod(shape))
        if size == 0:  # any entry is out of range: an error path (or an empty index)
            return torch_literal([0] * n, shape, "int64")
        if distinct:
            vals = self.r.sample(range(size), n) if n <= size else list(range(n))  # (n > size:
            # an out-of-range entry, an error path)
            vals = [v - size if self.coin(0.2) and not nonneg else v for v in vals]
        else:
            vals = [self.randint(0 if nonneg else -size, size - 1) for _ in range(n)]
        return torch_literal(vals, shape, "int64")

    def mask(self, x, shape=None):
        """A bool tensor expression broadcastable to ``x`` (a comparison, a constant or a
        live bool tensor)."""
        shape = tuple(x.val.shape) if shape is None else shape
        k = self.randint(0, 2)
        if k == 0 and x.val.dtype != torch.bool and shape == tuple(x.val.shape):
            return f"{x.expr} > {self.scalar('float')}"
        if k == 1:
            live = self.pick(lambda v: v.dtype == torch.bool and
                             tuple(v.shape) == tuple(shape))
            if live is not None:
                return live.expr
        return self.const(shape if self.coin(0.8) else self.broadcastable(shape, True), "bool")

    def basic_index(self, x):
        """Source for a basic index of ``x``: ints, slices, None and ``...``."""
        parts, ellipsis = [], False
        for size in x.val.shape:
            k = self.weighted(["all", "slice", "step", "int", "none", "ellipsis"],
                              [3, 4, 1, 2, 1, 1])
            if k == "all":
                parts.append(":")
            elif k == "slice":
                a = self.randint(-size - 1, size)
                b = self.randint(-size - 1, size + 1)
                parts.append(f"{a}:{b}" if self.coin(0.7) else
                             self.choice([f"{a}:", f":{b}"]))
            elif k == "step":
                parts.append(f"::{self.randint(1, 3)}")
            elif k == "int" and size > 0:
                parts.append(str(self.randint(-size, size - 1)))
            elif k == "none":
                parts.extend(["None", ":"])
            elif k == "ellipsis" and not ellipsis:
                parts.append("...")
                ellipsis = True
                break
            else:
                parts.append(":")
        while parts and parts[-1] == ":" and self.coin(0.6):
            parts.pop()
        if not parts:
            parts = [self.choice(["...", "None", ":"])]
        return ", ".join(parts)

    def factor_shape(self, numel):
        """A random shape of ``numel`` elements (sometimes with a -1)."""
        if numel == 0:
            shape = [0] + [self.randint(1, 3) for _ in range(self.randint(0, 2))]
            self.r.shuffle(shape)
            return tuple(shape)
        dims, rest = [], numel
        for p in (2, 3, 5):
            while rest % p == 0:
                dims.append(p)
                rest //= p
        if rest > 1:
            dims.append(rest)
        self.r.shuffle(dims)
        k = self.randint(1, min(4, max(len(dims), 1)))
        shape = [1] * k
        for d in dims:
            shape[self.randrange(k)] *= d
        for _ in range(self.randint(0, 1)):
            shape.insert(self.randint(0, len(shape)), 1)
        if self.coin(0.3):
            shape[self.randrange(len(shape))] = -1
        return tuple(shape)

    def peek(self, expr):
        """The PyTorch value of ``expr`` in the live namespace, or None if it raises."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return eval(expr, self.ns)  # noqa: S307 - the fuzzer's own generated code
        except Exception:  # noqa: BLE001
            return None

    def has_views(self, v):
        """Whether ``v`` is a view, or the base of a live view (in-place targets of interest)."""
        if v._base is not None:
            return True
        return any(o.val._base is v for o in self.operands())

    # -- program assembly --
    def leaves(self):
        first = None
        for i in range(self.weighted([1, 2, 3], [3, 4, 3])):
            if first is None or self.coin(0.25):
                shape = self.shape()
            else:
                shape = first if self.coin(0.3) else self.broadcastable(first)
            first = first if first is not None else shape
            dtype = self.dtype((8, 4, 2, 1) if i == 0 else (4, 3, 2, 1))
            vals = self.values(int(np.prod(shape)) if shape else 1, dtype,
                               special=self.coin(0.08))
            grad = dtype.startswith("float") and self.coin(0.95 if i == 0 else 0.6)
            code = f"a{i} = torch.tensor({np_literal(vals, shape, dtype)}" + \
                (", requires_grad=True)" if grad else ")")
            self.stmts.append(Stmt(code, "leaf", "leaf"))
        self._replay()

    def ops(self, table):
        names = [e.name for e in table]
        weights = [e.weight for e in table]
        by_name = {e.name: e for e in table}
        for _ in range(self.randint(3, 12)):
            for _attempt in range(40):
                entry = by_name[self.r.choices(names, weights)[0]]
                code = entry.fn(self)
                if code is None:
                    continue
                if not entry.stmt:
                    code = f"{self.new_name()} = {code}"
                    if self.coin(0.03):
                        code = "with torch.no_grad(): " + code
                status = self.add(code, entry.name)
                if status != "rejected" and not entry.stmt:
                    self.n_t += 1
                if status == "ok":
                    break
                if status == "error":
                    return False
        return True

    def _grad_inputs(self):
        return [o.expr for o in self.operands()
                if attr(o.val, "is_leaf") and o.val.requires_grad and "[" not in o.expr]

    def _grad_literal(self, v):
        return self.const(tuple(v.shape), str(v.dtype)[6:])

    def backward(self):
        """A backward stage: ``backward`` with a random gradient, ``.sum().backward()``, or
        ``autograd.grad(create_graph=True)`` followed by a Hessian-vector product."""
        outs = [o for o in self.operands() if o.val.requires_grad and
                o.val.is_floating_point() and attr(o.val, "is_leaf") is False]
        if not outs or not self.coin(P_BACKWARD):
            return
        out = self.r.choices(outs, [i + 1 for i in range(len(outs))])[0]
        kind = self.weighted(["vjp", "sum", "twice", "double"], [9, 4, 2, 5])
        inputs = self._grad_inputs()
        if kind == "sum":
            red = self.choice(["sum()", "sum()", "mean()", "sum(0)"])
            if out.val.numel() == 1 or self.coin(0.1):  # implicit gradient (non-scalar: error)
                red = self.choice([red, "", ""])
            self.add(f"{out.expr}{'.' + red if red else ''}.backward()", "backward(sum)",
                     "backward", keep_error=1)
        elif kind == "vjp" or not inputs:
            g = self._grad_literal(out.val)
            self.add(f"{out.expr}.backward({g})", "backward", "backward", keep_error=1)
        elif kind == "twice":
            g1, g2 = self._grad_literal(out.val), self._grad_literal(out.val)
            retain = ", retain_graph=True" if self.coin(0.85) else ""
            if self.add(f"{out.expr}.backward({g1}{retain})", "backward", "backward",
                        keep_error=1) == "ok":
                self.add(f"{out.expr}.backward({g2})", "backward(again)", "backward",
                         keep_error=1)
        else:
            g = self._grad_literal(out.val)
            unused = ", allow_unused=True" if self.coin(0.95) else ""
            code = (f"g0 = torch.autograd.grad({out.expr}, [{', '.join(inputs)}], {g}, "
                    f"create_graph=True{unused})")
            if self.add(code, "autograd.grad", "backward", keep_error=1) != "ok":
                return
            grads = [(i, v) for i, v in enumerate(self.ns["g0"])
                     if v is not None and v.requires_grad]
            if not grads:
                return
            i, v = self.choice(grads)
            vec = self._grad_literal(v)
            if self.coin(0.5):
                code = f"h0 = torch.autograd.grad(g0[{i}], [{', '.join(inputs)}], {vec}" \
                       f"{unused})"
            else:
                code = f"(g0[{i}] * {vec}).sum().backward()"
            self.add(code, "hvp", "backward", keep_error=1)


def generate(seed, table=None):
    """The program of ``seed`` (deterministic)."""
    from .optable import TABLE

    g = Gen(seed)
    g.leaves()
    if g.ops(table or TABLE):
        g.backward()
    return Program(seed, g.stmts)
