"""ember's array-API namespace over Tensors (``Tensor.__array_namespace__``).

Derivative rules run against this namespace under ``create_graph=True``: the same rule text
that runs on raw NumPy arrays then runs on ember Tensors and is recorded, giving higher-order
derivatives. Names and keywords follow the array API standard (``axis``, ``keepdims``): the
op families provide those spellings (their ``ARRAY_API``), other names resolve to ember's
function of the same name (``exp``, ``where``, ``matmul``...).
"""
from __future__ import annotations

from . import _dtypes, _xp


def __getattr__(name):
    """Array-API spellings from the op families, else ember's function of the same name."""
    from ._tensor_methods import FAMILIES
    fn = None
    for family in FAMILIES:
        fn = fn or getattr(family, "ARRAY_API", {}).get(name)
    extra = _xp.EXTRAS.get(name)
    if fn is None and extra is not None:
        fn = extra[1]
    if fn is None:
        import ember
        fn = getattr(ember, name, None)
    if not callable(fn):
        raise AttributeError(f"ember's array namespace has no attribute {name!r}")
    globals()[name] = fn  # resolved once
    return fn


def zeros(shape, dtype=None, device=None):
    from . import _creation
    return _creation.zeros(tuple(shape), dtype=_dt(dtype), device=device)


def zeros_like(x, dtype=None, device=None):
    from . import _creation
    return _creation.zeros_like(x, dtype=_dt(dtype))


def _dt(dtype):
    return dtype if isinstance(dtype, _dtypes.dtype) or dtype is None else \
        _dtypes.from_numpy_dtype(dtype)
