"""``torch.testing.assert_close``: are two (nested) inputs equal up to a tolerance?

The inputs are paired up first: sequences (not strings) element by element and mappings key
by key, recursively; each leaf pair is then None/None, two booleans, two numbers, or two
tensor-likes (ember tensors, or two NumPy arrays, which are compared as tensors). Pairing
problems (a length or key mismatch, an unsupported type, a half-given tolerance) are raised
before any value is compared; then the first leaf that differs raises. The messages are
PyTorch's, with ``The failure occurred for item [..]`` naming a nested leaf.

Default tolerances are PyTorch's per dtype (the larger of the two inputs' when they differ):
float16 / complex32 rtol 1e-3, atol 1e-5; bfloat16 1.6e-2, 1e-5; float32 / complex64 1.3e-6,
1e-5; float64 / complex128 1e-7, 1e-7; integers and bool compare exactly.
"""

import cmath
from collections.abc import Mapping, Sequence

import numpy as np

from .. import _device, _dtypes
from .._creation import as_tensor, tensor
from .._dtype_utils import promote_types
from .._tensor import Tensor

__all__ = ["assert_close", "assert_allclose"]

_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7), "complex32": (1e-3, 1e-5), "complex64": (1.3e-6, 1e-5),
               "complex128": (1e-7, 1e-7)}
_NUMBER_DTYPES = {int: _dtypes.int64, float: _dtypes.float64, complex: _dtypes.complex128}


class _Failure(Exception):
    """A comparison failure: the exception type and message to raise, and where it occurred."""

    def __init__(self, kind, message, where=()):
        super().__init__(message)
        self.kind, self.message, self.where = kind, message, where

    def to_error(self, msg):
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.message
        if self.where:
            text += "\n\nThe failure occurred for item " + "".join(f"[{k!r}]" for k in self.where)
        return self.kind(msg(text) if msg else text)


class _Unsupported(Exception):
    pass


def _type_repr(x):
    """``str(type(x))`` with ember's classes under PyTorch's names (``<class 'torch.Tensor'>``),
    as a script importing torch expects."""
    cls = type(x)
    if cls is Tensor:
        return "<class 'torch.Tensor'>"
    module = cls.__module__
    if module == "ember" or module.startswith("ember."):
        return f"<class '{'torch' + module[5:]}.{cls.__qualname__}'>"
    return str(cls)


def _tolerances(dtypes, rtol, atol, where):
    if (rtol is None) != (atol is None):
        raise _Failure(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                       f"but got no {'rtol' if rtol is None else 'atol'}.", where)
    if rtol is not None:
        return rtol, atol
    pairs = [_TOLERANCES.get(d.name, (0.0, 0.0)) for d in dtypes]
    return max(r for r, _ in pairs), max(a for _, a in pairs)


def _mismatch_message(what, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    exact = rtol == 0 and atol == 0
    lines = [f"{what} are not {'equal' if exact else 'close'}!", "", extra]
    for name, diff, idx, tol in (("absolute", abs_diff, abs_idx, atol),
                                 ("relative", rel_diff, rel_idx, rtol)):
        line = (f"{name.title()} difference: {diff}" if idx is None
                else f"Greatest {name} difference: {diff} at index {idx}")
        lines.append(line if exact else f"{line} (up to {tol} allowed)")
    return "\n".join(lines)


def _scalar_message(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_message("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None,
                             atol, rel_diff, None, rtol)


# ----------------------------------------------------------------------------- leaf pairs

class _NonePair:
    def __init__(self, actual, expected, where, **options):
        if not (actual is None or expected is None):
            raise _Unsupported
        self.actual, self.expected, self.where = actual, expected, where

    def compare(self):
        if not (self.actual is None and self.expected is None):
            raise _Failure(AssertionError,
                           f"None mismatch: {self.actual} is not {self.expected}", self.where)


class _BooleanPair:
    def __init__(self, actual, expected, where, **options):
        if not all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
            raise _Unsupported
        self.actual, self.expected, self.where = bool(actual), bool(expected), where

    def compare(self):
        if self.actual is not self.expected:
            raise _Failure(AssertionError,
                           f"Booleans mismatch: {self.actual} is not {self.expected}", self.where)


class _NumberPair:
    def __init__(self, actual, expected, where, *, rtol, atol, equal_nan, check_dtype, **_):
        kinds = (int, float, complex, np.number)
        if not all(isinstance(x, kinds) and not isinstance(x, bool) for x in (actual, expected)):
            raise _Unsupported
        actual, expected = (x.item() if isinstance(x, np.number) else x
                            for x in (actual, expected))
        self.actual, self.expected, self.where = actual, expected, where
        self.rtol, self.atol = _tolerances(
            [_NUMBER_DTYPES[type(x)] for x in (actual, expected)], rtol, atol, where)
        self.equal_nan, self.check_dtype = equal_nan, check_dtype

    def compare(self):
        a, e = self.actual, self.expected
        if self.check_dtype and type(a) is not type(e):
            raise _Failure(AssertionError,
                           f"The (d)types do not match: {type(a)} != {type(e)}.", self.where)
        if a == e or (self.equal_nan and cmath.isnan(a) and cmath.isnan(e)):
            return
        diff = abs(a - e)
        if cmath.isfinite(diff) and diff <= self.atol + self.rtol * abs(e):
            return
        raise _Failure(AssertionError, _scalar_message(a, e, self.rtol, self.atol), self.where)


class _TensorPair:
    def __init__(self, actual, expected, where, *, rtol, atol, allow_subclasses, **options):
        related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
        if not related or (not allow_subclasses and type(actual) is not type(expected)):
            raise _Unsupported
        if not isinstance(actual, (Tensor, np.ndarray)):
            raise _Unsupported
        if isinstance(actual, np.ndarray):
            try:
                actual, expected = as_tensor(actual), as_tensor(expected)
            except Exception:
                raise _Unsupported from None
        self.actual, self.expected, self.where = actual.detach(), expected.detach(), where
        self.rtol, self.atol = _tolerances((actual.dtype, expected.dtype), rtol, atol, where)
        self.options = options

    def _fail(self, message):
        raise _Failure(AssertionError, message, self.where)

    def compare(self):
        a, e, opt = self.actual, self.expected, self.options
        checks = [("shape", a.shape, e.shape)]
        if opt["check_device"]:
            checks.append(("device", a.device, e.device))
        if opt["check_dtype"]:
            checks.append(("dtype", a.dtype, e.dtype))
        if opt["check_layout"]:
            checks.append(("layout", a.layout, e.layout))
        if opt["check_stride"]:
            checks.append(("stride()", a.stride(), e.stride()))
        for name, x, y in checks:
            if x != y:
                self._fail(f"The values for attribute '{name}' do not match: {x} != {y}.")
        if a.device != e.device:
            a, e = a.cpu(), e.cpu()
        if a.dtype != e.dtype:
            common = promote_types(a.dtype, e.dtype)
            a, e = a.to(common), e.to(common)
        self._compare_values(_host(a), _host(e), a.dtype, opt["equal_nan"])

    def _compare_values(self, a, e, dtype, equal_nan):
        rtol, atol = self.rtol, self.atol
        matches = _isclose(a, e, rtol, atol, equal_nan)
        if matches.all():
            return
        if a.ndim == 0:
            self._fail(_scalar_message(a.item(), e.item(), rtol, atol))
        if not (dtype.is_floating_point or dtype.is_complex):
            a, e = a.astype(np.int64), e.astype(np.int64)
        a, e, matches = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
        n, bad = matches.size, int(matches.size - matches.sum())
        extra = f"Mismatched elements: {bad} / {n} ({bad / n:.1%})"
        with np.errstate(all="ignore"):
            abs_diff = np.abs(a - e)
            abs_diff[matches] = 0
            if abs_diff.dtype.kind in "iu":  # integer quotients in the default float dtype
                default = _dtypes.get_default_dtype().np
                rel_diff = abs_diff.astype(default) / np.abs(e).astype(default)
            else:
                rel_diff = abs_diff / np.abs(e)
            rel_diff[matches] = 0
        shape = self.actual.shape

        def where(flat):
            return tuple(int(k) for k in np.unravel_index(flat, shape))

        i, j = int(np.argmax(abs_diff)), int(np.argmax(rel_diff))
        self._fail(_mismatch_message("Tensor-likes", extra, abs_diff[i].item(), where(i), atol,
                                     rel_diff[j].item(), where(j), rtol))


def _host(t):
    """A NumPy array of a tensor's values (copied from the GPU for a CUDA tensor); float16 /
    bfloat16 stay in their dtype."""
    return _device.to_numpy(t._data)


def _isclose(a, e, rtol, atol, equal_nan):
    """``torch.isclose`` on arrays: equal, or (finite) within ``atol + rtol * |e|``; integers
    are measured in the default float dtype."""
    with np.errstate(all="ignore"):
        close = a == e
        if equal_nan and a.dtype.kind in "fc":
            close |= np.isnan(a) & np.isnan(e)
        if rtol == 0 and atol == 0:
            return close
        if a.dtype.kind not in "fc":
            default = _dtypes.get_default_dtype().np
            a, e = a.astype(default), e.astype(default)
        error = np.abs(a - e)
        return close | (np.isfinite(error) & (error <= atol + rtol * np.abs(e)))


_PAIRS = (_NonePair, _BooleanPair, _NumberPair, _TensorPair)


def _pair_up(actual, expected, where, options, out):
    """Append the leaf pairs of ``actual`` and ``expected`` to ``out`` (depth first)."""
    def is_seq(x):
        return isinstance(x, Sequence) and not isinstance(x, str)

    if is_seq(actual) and is_seq(expected):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, "The length of the sequences mismatch: "
                           f"{len(actual)} != {len(expected)}", where)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _pair_up(a, e, where + (i,), options, out)
        return
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        have, want = set(actual.keys()), set(expected.keys())
        if have != want:
            raise _Failure(AssertionError, "The keys of the mappings do not match:\n"
                           f"Missing keys in the actual mapping: {sorted(want - have)}\n"
                           f"Additional keys in the actual mapping: {sorted(have - want)}",
                           where)
        try:
            keys = sorted(have)
        except TypeError:
            keys = list(actual.keys())
        for k in keys:
            _pair_up(actual[k], expected[k], where + (k,), options, out)
        return
    for cls in _PAIRS:
        try:
            out.append(cls(actual, expected, where, **options))
            return
        except _Unsupported:
            continue
    raise _Failure(TypeError, "No comparison pair was able to handle inputs of type "
                   f"{_type_repr(actual)} and {_type_repr(expected)}.", where)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` are close: for each pair of
    values ``|actual - expected| <= atol + rtol * |expected|`` (NaNs equal only with
    ``equal_nan``), after the shapes, devices, dtypes and layouts (and strides, if asked)
    match. ``msg`` replaces the message (a string) or rewrites it (a callable)."""
    options = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
                   check_dtype=check_dtype, check_layout=check_layout,
                   check_stride=check_stride, allow_subclasses=allow_subclasses)
    pairs = []
    try:
        _pair_up(actual, expected, (), options, pairs)
    except _Failure as failure:  # (``msg`` is for differing values only, as in PyTorch)
        raise failure.to_error(None) from None
    try:
        for pair in pairs:
            pair.compare()
    except _Failure as failure:
        raise failure.to_error(msg) from None


_ALLCLOSE_TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5),
                        "float64": (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """PyTorch's deprecated older check (warns as PyTorch does): non-tensors become tensors
    (``expected`` in ``actual``'s dtype), dtypes may differ, NaNs are equal by default, and the
    default tolerances are its own: float16 1e-3 / 1e-3, float32 1e-4 / 1e-5, float64 1e-5 /
    1e-8, otherwise exact (the looser of the two inputs')."""
    import warnings

    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `torch.testing.assert_close()` "
                  "instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning,
                  stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        pairs = [_ALLCLOSE_TOLERANCES.get(t.dtype.name, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(r for r, _ in pairs), max(a for _, a in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)
