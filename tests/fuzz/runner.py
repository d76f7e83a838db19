"""Running a fuzz program on ember and on PyTorch in lockstep, comparing after every line.

After each line, every live name is compared (the line's own result first): Python type,
shape, dtype, values (dtype-aware tolerance, NaN positions equal, ints and bools exact),
``requires_grad``, ``is_leaf`` and ``type(grad_fn).__name__``; after a backward line, also the
``.grad`` of every leaf. An exception on one side only, or different exception types or
messages, is a mismatch; both raising the same ends the program there. The first mismatch is
classified (``CATEGORIES``) with the op-table entry of the line where it showed, and ends the
program — except a cosmetic one (a grad_fn name), which is noted and the program goes on.
Everything forgiven or softened is listed in one place: "Accepted differences" below.
"""
from __future__ import annotations

import functools
import re
import signal
import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import torch

import ember

from .generator import Program
from .known import known_reason

CATEGORIES = {
    "value": "values differ beyond tolerance (forward)",
    "dtype": "dtypes differ",
    "shape": "shapes (or tuple lengths) differ",
    "type": "Python types differ (tensor vs None, tuple vs tensor, float vs int, ...)",
    "requires_grad": "requires_grad differs",
    "is_leaf": "is_leaf differs",
    "grad_fn_name": "type(grad_fn).__name__ differs",
    "grad_value": "gradients differ (.grad, autograd.grad results)",
    "grad_none": "a gradient is None on one side only",
    "grad_shape": "gradient shapes differ", "grad_dtype": "gradient dtypes differ",
    "grad_type": "gradient Python types differ",
    "grad_requires_grad": "requires_grad of a gradient differs (create_graph)",
    "grad_grad_fn_name": "grad_fn of a gradient computed with create_graph=True differs",
    "grad_is_leaf": "is_leaf of a gradient differs",
    "missed_inplace_error": "PyTorch raised 'modified by an inplace operation', ember did not",
    "spurious_inplace_error": "ember raised 'modified by an inplace operation', PyTorch did not",
    "torch_raised_only": "PyTorch raised, ember did not",
    "ember_raised_only": "ember raised, PyTorch did not",
    "error_type": "both raised, different exception types",
    "error_message": "both raised the same type, different messages",
    "introspection": "reading an ember result (.numpy(), .grad_fn, ...) raised",
    "timeout": "a line ran past the time limit",
    # soft ones (see "Accepted differences" below)
    "value_unstable": "values differ, but only as rounding noise: the line's inputs already "
                      "differed within tolerance and PyTorch on ember's inputs agrees with "
                      "ember, or ember is as close as PyTorch to a float64 rerun",
    "grad_unstable": "gradients differ, but ember is as close as PyTorch to a float64 rerun "
                     "(an ill-conditioned float32 computation)",
    "torch_internal_error": "PyTorch failed an internal assert (a PyTorch bug, not ember's)",
}

# ---- Accepted differences ------------------------------------------------------------------
# Everything the fuzzer forgives or softens, and nothing else:
# 1. TOL: float values compare with a tolerance (float32 looser: the libraries evaluate
#    transcendental functions and reductions differently, and errors accumulate).
# 2. normalise_message() below: the only rewriting of error texts before comparing them.
# 3. SOFT categories: counted and shown by the report, xfailed (not failed) by the CI test:
#    - value_unstable / grad_unstable: rounding noise, as judged by ``_unstable`` (PyTorch
#      rerun on ember's inputs agrees with ember) or ``_referee`` (ember as close as PyTorch
#      to a float64 rerun of the whole program);
#    - torch_internal_error: PyTorch failing its own INTERNAL ASSERT (``compare_errors``);
#    - grad_grad_fn_name: ember records its derivative rules with its ordinary ops (one set
#      of formulas, higher derivatives for free: ``DESIGN.md``), so the nodes of a gradient
#      taken with ``create_graph=True`` are those ops' (``MulBackward0``, ``WhereBackward0``)
#      where PyTorch has hand-written double-backward nodes (``SigmoidBackwardBackward0``).
#      The values, dtypes and ``requires_grad`` of such gradients are still compared.
# 4. KNOWN (``known.py``): particular differences, each with its reason, that a category does
#    not cover: xfailed by the CI test and counted apart by the report.
# 5. COSMETIC categories do not end a program: noted, and the program goes on (a grad_fn
#    name must not hide the values and gradients after it); reported when nothing worse
#    follows, and always listed by the report.
TOL = {"float32": (2e-4, 1e-5), "float64": (1e-7, 1e-10)}
SOFT = {"value_unstable", "grad_unstable", "torch_internal_error", "grad_grad_fn_name"}
COSMETIC = {"grad_fn_name", "grad_grad_fn_name"}
INPLACE_MSG = "modified by an inplace operation"
LINE_TIMEOUT_S = 20.0


def normalise_message(msg):
    """The one place where error texts are normalised before comparing them. Every rule here
    hides a known, accepted difference; add new ones only with a reason.

    - PyTorch's C++ errors carry a C++ stack trace when TORCH_SHOW_CPP_STACKTRACES=1:
      dropped.
    - Object addresses (``at 0x7f...``) differ between any two runs: masked.
    - ember deliberately adds a paragraph of its own under PyTorch's text (``\n\nember: the
      tensor was saved for backward by ...; it was last modified in place by ...``, see
      ``ember/autograd/anomaly_mode.py``): dropped, PyTorch's text above it is compared.
    """
    msg = msg.split("\n\nember: ")[0]
    msg = re.sub(r"\nException raised from .*", "", msg, flags=re.S)
    msg = re.sub(r"0x[0-9a-f]+", "0x?", msg)
    return msg.strip()


@dataclass
class Mismatch:
    category: str
    op: str            # the op-table entry of the line where it showed
    step: int          # that line's index in the program
    detail: str
    known: str | None = None  # why, when ``known.py`` lists it

    @property
    def soft(self):
        return self.category in SOFT or self.known is not None

    def describe(self, program):
        return f"[{self.category}] at line {self.step} ({self.op}): " \
               f"{program.stmts[self.step].code}\n{self.detail}"

    def source(self, program):
        """``program`` as runnable Python, this mismatch noted under its line, followed by a
        ``print`` of the value that differs (when there is one)."""
        path = _PATH_RE.match(self.detail)
        extra = [f"print({path.group(1)})"] if path else []
        return program.source(self.step, f"{self.category}: {self.detail}", extra)


@dataclass
class Result:
    mismatch: Mismatch | None  # the first non-cosmetic mismatch, else the first cosmetic one
    lines_run: int
    both_raised: bool = False
    error: str = ""    # the agreed exception, when both raised
    cosmetic: list = field(default_factory=list)  # every cosmetic mismatch noted on the way


class _Timeout(BaseException):
    pass


@contextmanager
def _deadline(seconds):
    """Raise ``_Timeout`` in the main thread after ``seconds`` (no-op elsewhere)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def fire(*_):
        raise _Timeout()
    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@functools.lru_cache(maxsize=20000)
def _compiled(code):
    return compile(code, "<fuzz>", "exec")


def _exec(code, ns):
    try:
        exec(_compiled(code), ns)  # noqa: S102 - the fuzzer's own generated code
    except Exception as e:  # noqa: BLE001 - whatever is raised is compared
        return e
    return None


def _err(e):
    return f"{type(e).__name__}: {e}"


def compare_errors(ee, et):
    """(category, detail) for the exceptions of one line (either may be None), or None."""
    if et is not None and "INTERNAL ASSERT FAILED" in str(et):
        # Accepted: PyTorch's own bugs (``True ** x`` then backward: "unknown ivalue tag 4")
        # are not for ember to copy. Reported under a soft category, whatever ember did.
        return "torch_internal_error", f"ember {ee and _err(ee)}\ntorch {_err(et)}"
    if ee is not None and et is not None:
        if type(ee).__name__ != type(et).__name__:
            return "error_type", f"ember {_err(ee)}\ntorch {_err(et)}"
        if normalise_message(str(ee)) != normalise_message(str(et)):
            return "error_message", f"ember {_err(ee)}\ntorch {_err(et)}"
        return None
    if et is not None:
        cat = "missed_inplace_error" if INPLACE_MSG in str(et) else "torch_raised_only"
        return cat, f"torch raised {_err(et)}"
    cat = "spurious_inplace_error" if INPLACE_MSG in str(ee) else "ember_raised_only"
    return cat, f"ember raised {_err(ee)}"


# ---- comparing values -----------------------------------------------------------------------

def _short(a):
    return np.array2string(np.asarray(a), threshold=12, edgeitems=3, precision=8)


def _arrays_differ(ev, tv, dtype):
    """A description of how the value arrays differ, or None (ints and bools exact)."""
    if ev.dtype.kind == "f" and tv.dtype.kind == "f":
        rtol, atol = TOL.get(dtype, TOL["float32"])
        with np.errstate(invalid="ignore", over="ignore"):
            bad = ~np.isclose(ev, tv, rtol=rtol, atol=atol, equal_nan=True) | \
                (np.isnan(ev) != np.isnan(tv))
    else:
        bad = ev != tv
    if not np.any(bad):
        return None
    where = np.argwhere(bad)
    at = tuple(int(i) for i in where[0])
    return f"{where.shape[0]} of {ev.size} differ; first at {at}: " \
           f"ember {ev[at].item()!r} torch {tv[at].item()!r}"


class Raised(str):
    """What reading an attribute raised, as ``'Type: message'`` (compared like a value)."""


def _read(v, name):
    try:
        return getattr(v, name)
    except Exception as err:  # noqa: BLE001
        return Raised(_err(err))


def _np(t):
    if isinstance(t, torch.Tensor):  # force: PyTorch's gradients may be ZeroTensors
        return np.asarray(t.detach().numpy(force=True))
    return np.asarray(t.detach().numpy())


def diff(e, t, path, known=()):
    """(category, detail) for the first difference between ember's ``e`` and PyTorch's ``t``
    (any Python value a line can produce), or None. Categories are the forward ones;
    ``known``: paths whose grad_fn name difference was already noted (not reported again)."""
    if isinstance(t, torch.Tensor):
        if not isinstance(e, ember.Tensor):
            return ("none" if e is None else "type"), \
                f"{path}: ember gave {type(e).__name__} {e!r:.200}, torch a Tensor"
        if tuple(e.shape) != tuple(t.shape):
            return "shape", f"{path}: ember shape {tuple(e.shape)}, torch {tuple(t.shape)}"
        if str(e.dtype) != str(t.dtype):
            return "dtype", f"{path}: ember dtype {e.dtype}, torch {t.dtype}"
        try:
            ev = _np(e)
        except Exception as err:  # noqa: BLE001
            return "introspection", f"{path}: .numpy(): {_err(err)}"
        d = _arrays_differ(ev, _np(t), str(t.dtype)[6:])
        if d:
            return "value", f"{path}: {d}\n  ember {_short(ev)}\n  torch {_short(_np(t))}"
        for name in ("requires_grad", "is_leaf", "grad_fn"):
            a, b = _read(e, name), _read(t, name)
            if name == "grad_fn":
                name = "grad_fn_name"
                if path in known:
                    continue
                a, b = [x if isinstance(x, Raised) else type(x).__name__ for x in (a, b)]
            if isinstance(a, Raised) != isinstance(b, Raised):
                cat = "ember_raised_only" if isinstance(a, Raised) else "torch_raised_only"
                return cat, f"{path}.{name}: ember {a}, torch {b}"
            if isinstance(a, Raised):
                if a.split(":")[0] != b.split(":")[0]:
                    return "error_type", f"{path}.{name}: ember {a}\ntorch {b}"
                if normalise_message(a) != normalise_message(b):
                    return "error_message", f"{path}.{name}: ember {a}\ntorch {b}"
            elif a != b:
                return name, f"{path}: ember {name}={a}, torch {name}={b}"
        return None
    if t is None or e is None:
        return None if e is t else ("none", f"{path}: ember {e!r:.100}, torch {t!r:.100}")
    if isinstance(t, (tuple, list)):
        if type(e).__name__ != type(t).__name__:
            return "type", f"{path}: ember {type(e).__name__}, torch {type(t).__name__}"
        if len(e) != len(t):
            return "shape", f"{path}: ember has {len(e)} elements, torch {len(t)}"
        for i, (a, b) in enumerate(zip(e, t)):
            d = diff(a, b, f"{path}[{i}]", known)
            if d:
                return d
        return None
    if isinstance(t, (bool, int, float)):
        if type(e) is not type(t):
            return "type", f"{path}: ember {type(e).__name__} {e!r}, torch {type(t).__name__} {t!r}"
        if isinstance(t, float):
            d = _arrays_differ(np.array([e]), np.array([t]), "float32")
        else:
            d = None if e == t else f"ember {e!r} torch {t!r}"
        return ("value", f"{path}: {d}") if d else None
    if str(e) != str(t):
        return "type", f"{path}: ember {e!r:.100}, torch {t!r:.100}"
    return None


def _exact(e, t):
    """Whether ember's and PyTorch's values are bit-for-bit the same (NaNs equal)."""
    if isinstance(t, torch.Tensor):
        ev, tv = _np(e), _np(t)
        return np.array_equal(ev, tv, equal_nan=ev.dtype.kind == "f")
    if isinstance(t, (tuple, list)):
        return all(_exact(a, b) for a, b in zip(e, t))
    return True


def _names(ns):
    return [n for n in ns if n[:1] in "atgh" and n[1:].isdigit()]


GRAD_PREFIX = {"value", "shape", "dtype", "none", "type", "requires_grad", "is_leaf",
               "grad_fn_name"}


def _classify(cat, stage):
    """Forward categories become ``grad_*`` ones in the backward stage; a None/tensor
    difference in the forward is a ``type`` one."""
    if stage == "backward" and cat in GRAD_PREFIX:
        return "grad_none" if cat == "none" else "grad_" + cat
    return "type" if cat == "none" else cat


def compare_namespaces(stmt, ns_e, ns_t, exact, known=()):
    """The first (category, detail, name) difference after ``stmt`` ran, or None. Updates
    ``exact`` (name -> values bit-for-bit equal)."""
    order = [n for n in (stmt.defines, *stmt.uses[:1]) if n]
    names = list(dict.fromkeys(order + _names(ns_t)))
    for n in names:
        if n not in ns_e:
            return "type", f"{n}: ember has no such name", n
        d = diff(ns_e[n], ns_t[n], n, known)
        if d:
            return _classify(d[0], stmt.stage), d[1], n
        exact[n] = _exact(ns_e[n], ns_t[n])
    if stmt.stage == "backward":
        for n in names:
            t = ns_t[n]
            if isinstance(t, torch.Tensor) and (_read(t, "is_leaf") is True or
                                                _read(t, "retains_grad") is True):
                try:
                    eg = ns_e[n].grad
                except Exception as err:  # noqa: BLE001
                    return "introspection", f"{n}.grad: {_err(err)}", n
                d = diff(eg, t.grad, f"{n}.grad", known)
                if d:
                    return _classify(d[0], "backward"), d[1], n
    return None


# ---- the value-stability check ------------------------------------------------------------

def _snapshot(v):
    if isinstance(v, ember.Tensor):
        return _np(v).copy()
    if isinstance(v, (tuple, list)):
        return type(v)(_snapshot(x) for x in v) if type(v) in (tuple, list) else \
            tuple(_snapshot(x) for x in v)
    return v


def _to_torch(v):
    if isinstance(v, np.ndarray):
        return torch.from_numpy(v.copy())
    if isinstance(v, (tuple, list)):
        return type(v)(_to_torch(x) for x in v)
    return v


def _unstable(stmt, before, ns_e, name, exact):
    """Whether a forward value/shape difference in ``name`` after ``stmt`` is only noise
    amplified: some input of the line already differed (within tolerance), and PyTorch, run
    on ember's inputs (``before``: their values before the line), gives ember's answer. This
    is why ``value_unstable`` is a soft category: e.g. ``floor`` of 0.99999994 vs 1.0."""
    if stmt.stage != "op" or all(exact.get(n, True) for n in stmt.uses):
        return False
    if name not in (stmt.defines, *stmt.uses[:1]) or any(n not in before for n in stmt.uses):
        return False
    ns = {"torch": torch, "np": np, **{n: _to_torch(v) for n, v in before.items()}}
    with torch.no_grad():
        if _exec(stmt.code, ns) is not None or name not in ns:
            return False
    d = diff(ns_e[name], ns[name], name)
    return d is None or d[0] not in ("value", "shape")


# ---- the float64 referee --------------------------------------------------------------------

_PATH_RE = re.compile(r"([atgh]\d+(?:\[\d+\])*(?:\.grad)?)[:.]")


def _as64(code):
    """A line with every float32 made float64 (``.float()`` too)."""
    return code.replace("float32", "float64").replace(".float()", ".double()")


def _referee(program, mismatch, ns_e, ns_t):
    """Whether a float difference is only float32 rounding noise: the program rerun on
    PyTorch in float64 (float32 spelled float64, float64 the default dtype) is the truth, and
    ember's value is, everywhere, at most 4x further from it than PyTorch's float32 value
    plus the float32 tolerance. Ill-conditioned steps (``cos`` near a zero, cancellation in
    ``layer_norm``'s gradient) otherwise make false mismatches out of last-bit differences."""
    m = _PATH_RE.match(mismatch.detail)
    if m is None:
        return False
    path = m.group(1)
    ns = {"torch": torch, "np": np}
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        for st in program.stmts[:mismatch.step + 1]:
            if _exec(_as64(st.code), ns) is not None:
                return False
        e, t, r = (_np(eval(path, n)).astype(np.float64)  # noqa: S307 - our own paths
                   for n in (ns_e, ns_t, ns))
    except Exception:  # noqa: BLE001 - no referee, no verdict
        return False
    finally:
        torch.set_default_dtype(old)
    if not (e.shape == t.shape == r.shape):
        return False
    rtol, atol = TOL["float32"]
    with np.errstate(invalid="ignore", over="ignore"):
        ok = (np.abs(e - r) <= 4 * np.abs(t - r) + rtol * np.abs(r) + atol) | (e == t) | \
            (np.isnan(e) & np.isnan(t))
    return bool(ok.all())


# ---- running ---------------------------------------------------------------------------------

def _graph_names(ns, seen):
    """Add the class names of every node in the graphs of ember tensors in ``ns`` to ``seen``
    (the report's coverage of ember's registered ops)."""
    tensors = [v for v in ns.values() if isinstance(v, ember.Tensor)]
    tensors += [x for v in ns.values() if isinstance(v, (tuple, list))
                for x in v if isinstance(x, ember.Tensor)]
    stack = [_read(t, "grad_fn") for t in tensors]
    done = set()
    while stack:
        node = stack.pop()
        if node is None or isinstance(node, Raised) or id(node) in done:
            continue
        done.add(id(node))
        seen.add(type(node).__name__)
        try:
            stack.extend(n for n, _ in node.next_functions)
        except Exception:  # noqa: BLE001
            pass


def run(program: Program, timeout=LINE_TIMEOUT_S, seen=None) -> Result:
    """Run ``program`` on ember and on PyTorch, comparing after every line (``seen``: a set
    to collect the names of the ember graph nodes built). A mismatch that ``known.py``
    explains carries its reason (``Mismatch.known``)."""
    result = _run(program, timeout, seen)
    m = result.mismatch
    if m is not None and m.category not in SOFT:
        m.known = known_reason(program, m)
    return result


def _run(program, timeout, seen):
    ns_e = {"torch": ember, "np": np}
    ns_t = {"torch": torch, "np": np}
    exact = {}
    cosmetic, known = [], set()
    i = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, st in enumerate(program.stmts):
            before = {n: _snapshot(ns_e[n]) for n in st.uses if n in ns_e} \
                if st.stage == "op" else {}
            try:
                with _deadline(timeout):
                    ee = _exec(st.code, ns_e)
                with _deadline(timeout):
                    et = _exec(st.code, ns_t)
            except _Timeout:
                return Result(Mismatch("timeout", st.op, i, f"over {timeout}s"), i + 1,
                              cosmetic=cosmetic)
            if ee is not None or et is not None:
                m = compare_errors(ee, et)
                if m:
                    return Result(Mismatch(m[0], st.op, i, m[1]), i + 1, cosmetic=cosmetic)
                return Result(cosmetic[0] if cosmetic else None, i + 1, both_raised=True,
                              error=_err(et), cosmetic=cosmetic)
            while True:
                try:
                    found = compare_namespaces(st, ns_e, ns_t, exact, known)
                except Exception as err:  # noqa: BLE001 - a broken ember result, not a crash
                    found = ("introspection", _err(err), None)
                if not found or found[0] not in COSMETIC:
                    break
                cosmetic.append(Mismatch(found[0], st.op, i, found[1]))
                known.add(_PATH_RE.match(found[1]).group(1))
            if seen is not None:
                _graph_names(ns_e, seen)
            if found:
                cat, detail, name = found
                m = Mismatch(cat, st.op, i, detail)
                if cat in ("value", "shape") and _unstable(st, before, ns_e, name, exact):
                    m.category = "value_unstable"
                elif cat in ("value", "grad_value") and _referee(program, m, ns_e, ns_t):
                    m.category = "value_unstable" if cat == "value" else "grad_unstable"
                return Result(m, i + 1, cosmetic=cosmetic)
    return Result(cosmetic[0] if cosmetic else None, i + 1, cosmetic=cosmetic)


# ---- minimising ------------------------------------------------------------------------------

def _same(m, ref):
    """Whether ``m`` is still the mismatch ``ref`` (same category; forward: same op too)."""
    if m is None or m.category != ref.category:
        return False
    return m.op == ref.op or (ref.op.startswith(("backward", "autograd", "hvp")) and
                              m.op.startswith(("backward", "autograd", "hvp")))


def minimise(program: Program, mismatch: Mismatch, budget=300):
    """A shorter program with the same mismatch: lines after it cut, then lines dropped (or
    simplified: no ``no_grad``, a leaf without ``requires_grad``) one at a time, last first,
    while the mismatch persists, until none can go. Returns ``(program, mismatch)``."""
    stmts = list(program.stmts[:mismatch.step + 1])
    best = program.with_stmts(stmts)
    ref = run(best).mismatch
    if not _same(ref, mismatch):
        return program, mismatch
    changed = True
    while changed and budget > 0:
        changed = False
        for k in range(len(stmts) - 1, -1, -1):
            s = stmts[k]
            variants = [stmts[:k] + stmts[k + 1:]]
            if s.defines and s.uses:  # bypassed: later lines read its input instead
                name, src = re.compile(rf"\b{s.defines}\b"), s.uses[0]
                variants.append(stmts[:k] + [type(t)(name.sub(src, t.code), t.op, t.stage)
                                             for t in stmts[k + 1:]])
            for old, new in (("with torch.no_grad(): ", ""), (", requires_grad=True", "")):
                if old in s.code:  # or a simpler line
                    variants.append(stmts[:k] + [type(s)(s.code.replace(old, new), s.op,
                                                         s.stage)] + stmts[k + 1:])
            for cand in variants:
                budget -= 1
                m = run(program.with_stmts(cand)).mismatch
                if _same(m, mismatch):
                    stmts, ref, changed = cand, m, True
                    break
        best = program.with_stmts(stmts)
    return best, ref


def failure_report(program, mismatch, minimised=None):
    """The message for a failing seed: runnable reproductions and the first mismatch."""
    parts = [f"seed {program.seed}: {mismatch.describe(program)}", ""]
    if minimised is not None:
        prog, m = minimised
        parts += ["# minimised reproduction (same mismatch category):", m.source(prog), ""]
    parts += ["# the full program:", mismatch.source(program)]
    return "\n".join(parts)
