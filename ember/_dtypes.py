"""dtype objects, the default dtype, and PyTorch's type-promotion rules.

Everything about dtypes lives here: the `ember.float32`-style objects, the mapping to and
from NumPy dtypes, the category lattice (bool < integer < floating < complex), and
`result_type`, which reproduces PyTorch's rule that dimensioned tensors outrank 0-dim
tensors, which outrank Python scalars, *within the same category*.
"""
from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ._typing import DTypeLike

__all__ = [
    "dtype", "float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64",
    "uint8", "bool", "complex64", "complex128", "half", "float", "double", "short", "int",
    "long", "cfloat", "cdouble", "get_default_dtype", "set_default_dtype", "promote_types",
    "result_type", "can_cast",
]

_BOOL, _INT, _FLOAT, _COMPLEX = range(4)


class dtype:
    """A tensor element type, printed the way PyTorch prints it (``torch.float32``)."""

    __slots__ = ("name", "np", "category", "itemsize", "is_signed", "_legacy", "_word")

    def __init__(self, name, np_dtype, category, legacy, itemsize=None):
        self.name = name
        if np_dtype is not None:  # (None: an ``_ExtensionDtype``, whose NumPy dtype is lazy)
            self.np = np.dtype(np_dtype)
        self.category = category
        self.itemsize = self.np.itemsize if itemsize is None else itemsize
        self.is_signed = category != _BOOL and name != "uint8"
        self._legacy = legacy  # the legacy tensor-type name, as in 'torch.FloatTensor'
        self._word = legacy[:-len("Tensor")]  # its scalar type in messages: 'Float', 'Long'

    @property
    def _c_name(self):
        """The C type name PyTorch uses in some messages ('float', 'double', 'long')."""
        return {"float32": "float", "float64": "double", "float16": "c10::Half",
                "bfloat16": "c10::BFloat16",
                "int64": "long", "int32": "int", "int16": "short", "int8": "signed char",
                "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
                "complex128": "c10::complex<double>"}[self.name]

    @property
    def _cpp_name(self):
        """The C++ type name other messages print: ``_c_name`` with 'long int' and 'short int'
        ('expected dtype long int for `end`')."""
        name = self._c_name
        return {"long": "long int", "short": "short int"}.get(name, name)

    @property
    def is_floating_point(self):
        return self.category == _FLOAT

    @property
    def kind(self):
        """NumPy's kind letter ('f' for bfloat16 too, whose NumPy dtype says 'V')."""
        return "f" if self.category == _FLOAT else self.np.kind

    @property
    def is_complex(self):
        return self.category == _COMPLEX

    def to_real(self):
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self):
        return {float16: complex64, bfloat16: complex64, float32: complex64,
                float64: complex128}.get(self, self)

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return self.name  # pickles as the module-level singleton


float16 = dtype("float16", np.float16, _FLOAT, "HalfTensor")
float32 = dtype("float32", np.float32, _FLOAT, "FloatTensor")
float64 = dtype("float64", np.float64, _FLOAT, "DoubleTensor")
int8 = dtype("int8", np.int8, _INT, "CharTensor")
int16 = dtype("int16", np.int16, _INT, "ShortTensor")
int32 = dtype("int32", np.int32, _INT, "IntTensor")
int64 = dtype("int64", np.int64, _INT, "LongTensor")
uint8 = dtype("uint8", np.uint8, _INT, "ByteTensor")
bool = dtype("bool", np.bool_, _BOOL, "BoolTensor")  # noqa: A001 - PyTorch's public name
complex64 = dtype("complex64", np.complex64, _COMPLEX, "ComplexFloatTensor")
complex128 = dtype("complex128", np.complex128, _COMPLEX, "ComplexDoubleTensor")


class _ExtensionDtype(dtype):
    """A dtype NumPy lacks, stored in arrays of an ``ml_dtypes`` type (an optional dependency:
    ``pip install ml_dtypes``, or ``ember[bf16]``). ``ml_dtypes`` is imported the first time an
    array of this type is needed (``.np``); without it that raises, so that ``bfloat16`` is
    never silently another type.

    Ops never compute in these types: the op machinery (``ops/registry.py``) hands forwards and
    derivative rules float32 arrays and rounds their floating results back, as PyTorch computes
    its reduced-precision ops in float32 and rounds each op's result.
    """

    __slots__ = ("_ml_name",)

    def __init__(self, name, ml_name, category, legacy, itemsize):
        super().__init__(name, None, category, legacy, itemsize)
        self._ml_name = ml_name

    @property
    def np(self):
        try:
            import ml_dtypes
        except ImportError:
            raise RuntimeError(
                f"ember.{self.name} needs the ml_dtypes package, which stores {self.name} arrays "
                "for NumPy; install it with 'pip install ml_dtypes' (or 'pip install "
                "ember[bf16]')") from None
        npd = np.dtype(getattr(ml_dtypes, self._ml_name))
        _register_extension(self, npd)
        return npd


def _register_extension(d, npd):
    """Make ``d`` known by its NumPy dtype (once ml_dtypes is imported), and store that dtype
    where ``d.np`` finds it without calling the property again."""
    if npd not in _FROM_NP:
        _FROM_NP[npd] = d
        LOW_PRECISION[npd] = float32.np
        LOW_PRECISION_TYPES.add(type(npd))
        NUMPY_LACKS.add(type(npd))
        _INEXACT_TYPES.add(type(npd))


# PyTorch's brain floating point: float32's 8 exponent bits and range, 7 mantissa bits.
bfloat16 = _ExtensionDtype("bfloat16", "bfloat16", _FLOAT, "BFloat16Tensor", 2)

half, float, double = float16, float32, float64  # noqa: A001
short, int, long = int16, int32, int64  # noqa: A001
cfloat, cdouble = complex64, complex128

ALL = (bool, uint8, int8, int16, int32, int64, float16, float32, float64, complex64, complex128)
_FROM_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL + (bfloat16,)}
# The NumPy dtypes of the ``_ExtensionDtype``s in use -> the NumPy dtype ops compute them in,
# and the classes of those dtypes (for cheap ``type(a.dtype) in ...`` tests on hot paths).
# They fill as ml_dtypes types are first used (``_register_extension``).
LOW_PRECISION = {np.dtype(np.float16): np.dtype(np.float32)}
LOW_PRECISION_TYPES = {type(np.dtype(np.float16))}
# The classes of those that NumPy itself lacks (ml_dtypes'): no ``numpy()`` of them.
NUMPY_LACKS = set()
# The classes of every floating and complex NumPy dtype a tensor can hold.
_INEXACT_TYPES = {type(np.dtype(c)) for c in "efdFD"}


def is_inexact(np_dtype):
    """Whether a tensor's NumPy dtype is floating or complex (bfloat16 too, whose NumPy kind
    is 'V')."""
    return np_dtype.kind in "fc" or type(np_dtype) in LOW_PRECISION_TYPES


def from_numpy_dtype(np_dtype) -> dtype:
    """The ember dtype for a NumPy dtype; TypeError for types PyTorch has no equivalent of
    (and for ml_dtypes types before ember uses them: NumPy arrays of those, as PyTorch)."""
    try:
        return _FROM_NP[np_dtype]
    except KeyError:
        npd = np.dtype(np_dtype)
        module = npd.type.__module__.split(".")[0]
        raise TypeError(
            f"can't convert np.ndarray of type {module}.{npd.name}. The only "
            "supported types are: float64, float32, float16, complex64, complex128, int64, "
            "int32, int16, int8, uint8, and bool."
        ) from None


def by_name(name):
    return _BY_NAME[name]


# ---------------------------------------------------------------- default dtype
_default = [float32]


def get_default_dtype() -> dtype:
    """The dtype of tensors made from Python floats (``torch.float32`` unless changed)."""
    return _default[0]


def set_default_dtype(d):
    """Set the dtype used for Python floats; only floating dtypes are allowed, as in PyTorch."""
    if not isinstance(d, dtype) or d not in (float16, float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


def default_complex_dtype():
    return complex128 if _default[0] is float64 else complex64


# ---------------------------------------------------------------- promotion
def promote_types(a, b):
    """PyTorch's ``promote_types``: the smallest dtype both ``a`` and ``b`` convert to safely."""
    if a is b:
        return a
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == _COMPLEX and lo.category == _FLOAT and lo is float64:
            return complex128
        return hi
    if bfloat16 in (a, b) and float16 in (a, b):
        return float32  # neither holds the other: float16 has the precision, bfloat16 the range
    if a.category == _INT:
        if uint8 in (a, b):
            other = b if a is uint8 else a
            return int16 if other is int8 else other
        return a if a.itemsize > b.itemsize else b
    return a if a.itemsize > b.itemsize else b


def _combine(higher, lower):
    """Fold a lower-priority participant into a result (PyTorch's ``combine_categories``)."""
    if higher is None:
        return lower
    if lower is None or higher.category == _COMPLEX:
        return higher
    if lower.category == _COMPLEX:
        return higher.to_complex() if higher.category == _FLOAT else lower
    if higher.category == _FLOAT:
        return higher
    if higher is bool or lower.category == _FLOAT:
        return promote_types(higher, lower)
    return higher


_pybool, _pyint, _pyfloat = builtins.bool, builtins.int, builtins.float


def scalar_dtype(value):
    """The dtype a Python scalar takes when it stands beside tensors (a 'wrapped number')."""
    if isinstance(value, _pybool):
        return bool
    if isinstance(value, _pyint):
        return int64
    if isinstance(value, _pyfloat):
        return _default[0]
    if isinstance(value, complex):
        return default_complex_dtype()
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


def result_type(*operands):
    """The dtype of an elementwise op on ``operands`` (tensors and Python scalars).

    Dimensioned tensors decide first; a 0-dim tensor or a Python scalar only changes the
    result when it belongs to a higher category (int -> float -> complex), exactly as in
    PyTorch, so ``float16_tensor * 2.5`` stays float16 and ``int_tensor * 2.5`` is float32.
    """
    dim_r = zero_r = wrapped_r = None
    for op in operands:
        d = getattr(op, "dtype", None)
        if d is None:
            sd = scalar_dtype(op)
            wrapped_r = sd if wrapped_r is None else promote_types(wrapped_r, sd)
        elif op.ndim:
            dim_r = d if dim_r is None else promote_types(dim_r, d)
        else:
            zero_r = d if zero_r is None else promote_types(zero_r, d)
    return _combine(dim_r, _combine(zero_r, wrapped_r))


def can_cast(from_, to):
    """PyTorch's ``can_cast``: no casting down a category (float -> int, complex -> float...)."""
    if from_.category > to.category:
        return False
    return True


def is_floating(np_dtype):
    """Whether a tensor's NumPy dtype is floating (bfloat16 too)."""
    return np_dtype.kind == "f" or type(np_dtype) in LOW_PRECISION_TYPES


_INT_BOUNDS: dict = {}  # NumPy integer dtype -> (min, max): ``np.iinfo`` is ~1 us a call


def int_bounds(np_dtype):
    """The least and greatest values of the NumPy integer dtype ``np_dtype``."""
    bounds = _INT_BOUNDS.get(np_dtype)
    if bounds is None:
        info = np.iinfo(np_dtype)
        bounds = _INT_BOUNDS[np_dtype] = (builtins.int(info.min), builtins.int(info.max))
    return bounds


def np_finfo(np_dtype):
    """NumPy's ``finfo`` of a tensor's NumPy dtype (ml_dtypes' own for its types)."""
    if type(np_dtype) in NUMPY_LACKS:
        import ml_dtypes
        return ml_dtypes.finfo(np_dtype)
    return np.finfo(np_dtype)


# --------------------------------------------------------------------------- dtype arguments

_dtype_class = dtype  # (as_dtype's argument shadows the name)
_PY_DTYPES = ((builtins.bool, bool), (builtins.int, int64), (builtins.float, float64),
              (builtins.complex, complex128))


def _type_name(obj):
    """The type name PyTorch's argument parser reports for ``obj``."""
    t = type(obj)
    # (a Tensor, or a subclass such as Parameter: ember._tensor imports this module)
    if any(c.__name__ == "Tensor" and c.__module__ == "ember._tensor" for c in t.__mro__):
        return "Tensor"
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def as_dtype(dtype: DTypeLike, name: str) -> dtype | None:
    """``dtype`` as an ember dtype (None stays None): Python's ``bool``, ``int``, ``float`` and
    ``complex`` stand for PyTorch's bool, int64, float64 and complex128, as in PyTorch. Every
    public function that takes a ``dtype`` argument reads it through this."""
    if dtype is None or isinstance(dtype, _dtype_class):
        return dtype
    for py, dt in _PY_DTYPES:
        if dtype is py:
            return dt
    raise TypeError(f"{name}(): argument 'dtype' must be torch.dtype, not {_type_name(dtype)}")
