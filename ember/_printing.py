"""Tensor printing: the text of ``repr(tensor)`` and ``str(tensor)``, as PyTorch writes it.

The output must match PyTorch character for character, so this module follows PyTorch's
layout rules closely, quirks included:

* A formatter looks at (a summary of) the values once and picks one notation for the whole
  tensor: integer-valued floats (``2.``), fixed point (``2.5000``) or scientific
  (``2.5000e+09``). Every element is then right-aligned to the widest element.
* Nested dimensions become nested brackets; one-dimensional rows wrap at ``linewidth``.
* Tensors with more than ``threshold`` elements show only ``edgeitems`` entries at each end
  of every long dimension, with ``...`` in between.
* ``device=``, ``dtype=``, ``size=``, ``grad_fn=`` and ``requires_grad=`` follow the values
  and move onto a new line when the current one would get too long.

The tensor handed to :func:`tensor_repr` is only used through a small protocol: ``_data``,
``dtype``, ``device``, ``shape``, ``requires_grad`` and ``grad_fn``.
"""
from __future__ import annotations

import contextlib
import dataclasses
import math

import numpy as np

from . import _dtypes
from ._device import to_numpy

__all__ = ["get_printoptions", "printoptions", "set_printoptions", "tensor_repr"]


# ---------------------------------------------------------------- options
@dataclasses.dataclass
class _PrintOptions:
    """The current print options; field order is the order ``get_printoptions`` reports."""

    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


_OPTIONS = _PrintOptions()

# What each named profile resets; the other options are left as they are.
_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision=None,
    threshold=None,
    edgeitems=None,
    linewidth=None,
    profile=None,
    sci_mode=None,
):
    """Change how tensors print (``torch.set_printoptions``).

    Args:
        precision: digits after the decimal point for floating values (default 4).
        threshold: element count above which a tensor is summarised (default 1000).
        edgeitems: entries kept at each end of a summarised dimension (default 3).
        linewidth: characters per line before rows wrap (default 80).
        profile: ``'default'``, ``'short'`` or ``'full'``; applied first, so the other
            arguments override it. Unknown names are ignored, as in PyTorch.
        sci_mode: ``True`` or ``False`` forces scientific notation on or off; ``None``
            lets each tensor choose.

    As in PyTorch, ``sci_mode`` is always assigned, so any call that leaves it out turns
    it back to automatic.
    """
    if profile in _PROFILES:
        for name, value in _PROFILES[profile].items():
            setattr(_OPTIONS, name, value)
    for name, value in (
        ("precision", precision),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("linewidth", linewidth),
    ):
        if value is not None:
            setattr(_OPTIONS, name, value)
    _OPTIONS.sci_mode = sci_mode


def get_printoptions():
    """The current options as a dict that can be passed back to :func:`set_printoptions`."""
    return dataclasses.asdict(_OPTIONS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Context manager that applies :func:`set_printoptions` and restores the old options."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# ---------------------------------------------------------------- element formatting
class _Formatter:
    """Chooses one notation and one column width for a set of real (or integer) values.

    ``values`` is the array the choice is based on (the summary, for large tensors);
    ``floating`` says whether the tensor is floating point (or a part of a complex one).
    """

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True  # every finite nonzero value is a whole number
        self.sci_mode = False
        self.width = 1
        flat = values.reshape(-1)
        if not floating:
            self.width = max([1] + [len(str(v)) for v in np.unique(flat).tolist()])
            return
        chosen = flat[np.isfinite(flat) & (flat != 0)]
        if chosen.size == 0:
            return  # only zeros, nan and inf: plain notation, whatever sci_mode says
        self.int_mode = bool(np.all(chosen == np.ceil(chosen)))
        self.sci_mode = self._wants_scientific(chosen)
        samples = np.unique(chosen).tolist()
        precision = _OPTIONS.precision
        if self.sci_mode:
            widths = [len(f"{v:.{precision}e}") for v in samples]
        elif self.int_mode:
            widths = [len(f"{v:.0f}") + 1 for v in samples]  # + 1 for the trailing '.'
        else:
            widths = [len(f"{v:.{precision}f}") for v in samples]
        self.width = max([self.width] + widths)

    @staticmethod
    def _wants_scientific(chosen):
        """Scientific notation when forced, or for a wide range or extreme magnitudes."""
        if _OPTIONS.sci_mode is not None:
            return _OPTIONS.sci_mode
        magnitudes = np.abs(chosen).astype(np.float64)
        smallest, largest = float(magnitudes.min()), float(magnitudes.max())
        return largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4

    def format(self, value):
        """One value (a Python number) as text, right-aligned to the common width."""
        if not self.floating:
            text = f"{value}"
        elif self.sci_mode:
            text = f"{value:.{_OPTIONS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."
        else:
            text = f"{value:.{_OPTIONS.precision}f}"
        return text.rjust(self.width)


def _format_element(value, formatters):
    """A real value with one formatter, or a complex one as ``real+imagj``."""
    if len(formatters) == 1:
        return formatters[0].format(value)
    real_fmt, imag_fmt = formatters
    real = real_fmt.format(value.real)
    imag = (imag_fmt.format(value.imag) + "j").lstrip()
    if imag[0] in "+-":
        return real + imag
    return real + "+" + imag


def _element_width(formatters):
    """Room one element takes in a row, separator ``', '`` included."""
    width = formatters[0].width + 2
    if len(formatters) == 2:
        width += formatters[1].width + 1  # the imaginary part and its 'j'
    return width


# ---------------------------------------------------------------- summarising
def _edge_indices(length, edge):
    """Indices kept along a dimension of ``length`` entries when summarising."""
    if length > 2 * edge:
        return list(range(edge)) + list(range(length - edge, length))
    return list(range(length))


def _summary(array, edge):
    """The values a summarised tensor actually shows, used to choose the format.

    Every dimension longer than ``2 * edge`` keeps only its first and last ``edge`` entries.
    With ``edge == 0`` a vector keeps everything (PyTorch slices it as ``[:0]`` plus
    ``[-0:]``), while a tensor of two or more dimensions keeps nothing.
    """
    if array.ndim == 0:
        return array
    if array.ndim == 1:
        if array.shape[0] > 2 * edge:
            return np.concatenate((array[:edge], array[-edge:]))
        return array
    if not edge:
        return array[(slice(0, 0),) * array.ndim]
    rows = _edge_indices(array.shape[0], edge)
    return np.stack([_summary(array[i], edge) for i in rows])


# ---------------------------------------------------------------- layout
def _vector_text(row, indent, summarize, formatters):
    """A one-dimensional row, wrapped so that each line fits in ``linewidth``."""
    edge = _OPTIONS.edgeitems
    per_line = max(1, math.floor((_OPTIONS.linewidth - indent) / _element_width(formatters)))

    def texts(part):
        return [_format_element(v, formatters) for v in part.tolist()]

    if summarize and not edge:
        items = ["..."]
    elif summarize and row.shape[0] > 2 * edge:
        items = texts(row[:edge]) + [" ..."] + texts(row[-edge:])
    else:
        items = texts(row)
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_text(array, indent, summarize, formatters):
    """Brackets within brackets; a blank line per dimension beyond two separates blocks."""
    if array.ndim == 0:
        return _format_element(array.item(), formatters)
    if array.ndim == 1:
        return _vector_text(array, indent, summarize, formatters)
    length, edge = array.shape[0], _OPTIONS.edgeitems
    if summarize and length > 2 * edge:
        parts = (
            [_nested_text(array[i], indent + 1, summarize, formatters) for i in range(edge)]
            + ["..."]
            + [
                _nested_text(array[i], indent + 1, summarize, formatters)
                for i in range(length - edge, length)
            ]
        )
    else:
        parts = [_nested_text(sub, indent + 1, summarize, formatters) for sub in array]
    separator = "," + "\n" * (array.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(parts) + "]"


def _values_text(array, dtype, indent):
    """The bracketed values of a non-empty tensor, starting ``indent`` columns in."""
    summarize = array.size > _OPTIONS.threshold
    edge = _OPTIONS.edgeitems

    def formatter_for(part, floating):
        return _Formatter(_summary(part, edge) if summarize else part, floating)

    if dtype.is_complex:
        formatters = (formatter_for(array.real, True), formatter_for(array.imag, True))
    else:
        formatters = (formatter_for(array, dtype.is_floating_point),)
    return _nested_text(array, indent, summarize, formatters)


# ---------------------------------------------------------------- suffixes
def _has_default_dtype(dtype):
    """dtypes a tensor of values can have without saying so: they follow from the values."""
    return dtype in (
        _dtypes.get_default_dtype(),
        _dtypes.default_complex_dtype(),
        _dtypes.int64,
        _dtypes.bool,
    )


def _suffixes(tensor, shape):
    """The ``key=value`` items after the values, in PyTorch's order."""
    found = []
    if tensor.device.type != "cpu":
        found.append(f"device='{tensor.device}'")
    dtype = tensor.dtype
    size_text = "size=" + str(shape)
    if math.prod(shape) == 0:
        # No values to guess the dtype from, so anything but the float default is shown.
        if len(shape) != 1:
            found.append(size_text)
        if dtype is not _dtypes.get_default_dtype():
            found.append(f"dtype={dtype!r}")
    else:
        if not _OPTIONS.edgeitems:
            found.append(size_text)
        if not _has_default_dtype(dtype):
            found.append(f"dtype={dtype!r}")
    if tensor.grad_fn is not None:
        found.append(f"grad_fn=<{type(tensor.grad_fn).__name__}>")
    elif tensor.requires_grad:
        found.append("requires_grad=True")
    if tensor._fw is not None:
        found.append(f"tangent={tensor._fw}")
    return found


def _attach_suffixes(text, suffixes, indent):
    """Append ``suffixes`` and the closing parenthesis, breaking lines as PyTorch does.

    PyTorch overestimates the length of the current line by two characters (it counts from
    the last newline *plus one*), and this reproduces that, since it decides where the
    line breaks fall.
    """
    pieces = [text]
    line_length = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if line_length + len(suffix) + 2 > _OPTIONS.linewidth:
            pieces.append(",\n" + " " * indent + suffix)
            line_length = indent + len(suffix)
        else:
            pieces.append(", " + suffix)
            line_length += len(suffix) + 2
    pieces.append(")")
    return "".join(pieces)


# ---------------------------------------------------------------- entry point
def _host_array(tensor, shape):
    """The tensor's values as a NumPy array of the tensor's shape."""
    data = tensor._data
    if not isinstance(data, (np.ndarray, np.generic)):
        data = to_numpy(data)
    return np.asarray(data).reshape(shape)


def tensor_repr(tensor):
    """The text PyTorch prints for ``tensor``: what ``repr`` and ``str`` return."""
    prefix = "tensor("
    shape = tuple(int(n) for n in tensor.shape)
    array = _host_array(tensor, shape)
    if array.size == 0:
        body = "[]"
    else:
        body = _values_text(array, tensor.dtype, len(prefix))
    return _attach_suffixes(prefix + body, _suffixes(tensor, shape), len(prefix))
