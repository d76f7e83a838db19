"""Type aliases the public API's hints share (``Tensor``, the creation functions, ``optim``).

The hinted modules import these under ``typing.TYPE_CHECKING`` (their annotations are strings,
``from __future__ import annotations``), so hints cost nothing at run time; the aliases are
ordinary values too, for tools that evaluate annotations.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

from ._device import device
from ._dtypes import dtype

__all__ = ["Number", "ShapeLike", "IntOrInts", "DTypeLike", "DeviceLike"]

# A Python number as ops take it (``x * 2``, ``full(size, 0.5)``, ``item()``'s result).
Number: TypeAlias = int | float | bool
# Sizes as ``zeros(2, 3)``, ``zeros((2, 3))`` and ``zeros(x.shape)`` take them.
ShapeLike: TypeAlias = int | Sequence[int]
# A size per spatial dimension, or one int for all of them (kernel_size, stride, padding...).
IntOrInts: TypeAlias = int | Sequence[int]
# A dtype; Python's ``bool``, ``int``, ``float`` and ``complex`` stand for PyTorch's bool, int64,
# float64 and complex128, as in PyTorch.
DTypeLike: TypeAlias = dtype | type[bool] | type[int] | type[float] | type[complex] | None
# A device: ``ember.device("cuda", 0)``, ``"cpu"``, ``"cuda:0"``, or a CUDA index.
DeviceLike: TypeAlias = device | str | int | None
