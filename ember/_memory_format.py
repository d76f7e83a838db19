"""Memory formats: ``torch.contiguous_format``, ``preserve_format``, ``channels_last`` and
``channels_last_3d``.

A memory format names an order of a tensor's elements in memory; values never depend on it.
ember's tensors are NumPy (or CuPy) arrays, whose strides can express the same layouts, so the
formats are real here: ``channels_last`` is a copy made contiguous in (N, H, W, C) order and
viewed back as (N, C, H, W), and ``stride()`` / ``is_contiguous(memory_format=)`` answer as in
PyTorch. ``preserve_format`` keeps the input's stride order (NumPy's ``order="K"``), which is
what PyTorch does for dense inputs and for the usual strided ones.
"""

class memory_format:
    """One of PyTorch's memory formats (instances are the four module constants)."""

    __slots__ = ("_name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'torch.memory_format' instances")

    @classmethod
    def _make(cls, name):
        self = object.__new__(cls)
        self._name = name
        return self

    def __repr__(self):
        return "torch." + self._name

    def __reduce__(self):  # pickled by name: unpickling gives back the same constant
        return _by_name, (self._name,)


memory_format.__module__ = "torch"

contiguous_format = memory_format._make("contiguous_format")
preserve_format = memory_format._make("preserve_format")
channels_last = memory_format._make("channels_last")
channels_last_3d = memory_format._make("channels_last_3d")
_BY_NAME = {f._name: f for f in (contiguous_format, preserve_format, channels_last,
                                 channels_last_3d)}


def _by_name(name):
    return _BY_NAME[name]


# the names PyTorch's C++ messages use
CPP_NAMES = {contiguous_format: "Contiguous", preserve_format: "Preserve",
             channels_last: "ChannelsLast", channels_last_3d: "ChannelsLast3d"}

# the axis order of each channels-last layout, outermost first
_ORDER = {channels_last: (0, 2, 3, 1), channels_last_3d: (0, 2, 3, 4, 1)}


def check(fmt, fname, default=preserve_format):
    """``fmt`` itself (``default`` for None); PyTorch's TypeError for anything else."""
    if fmt is None:
        return default
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{fname}(): argument 'memory_format' must be torch.memory_format, "
                        f"not {type(fmt).__name__}")
    return fmt


def check_rank(ndim, fmt):
    order = _ORDER.get(fmt)
    if order is not None and ndim != len(order):
        raise RuntimeError(f"required rank {len(order)} tensor to use {fmt._name} format")


def _dense_strides(shape, order, itemsize):
    """The strides (bytes) of a dense layout with axes laid out in ``order``, outermost first;
    a size-1 axis takes the stride of the axis inside it, as PyTorch computes them."""
    strides, step = [0] * len(shape), itemsize
    for ax in reversed(order):
        strides[ax] = step
        step *= max(shape[ax], 1)
    return tuple(strides)


def contiguous_strides(shape):
    """The strides (in elements) of a C-contiguous tensor of ``shape``, as PyTorch gives them
    (a size-0 or size-1 axis counts as size 1)."""
    return _dense_strides(shape, range(len(shape)), 1)


def is_contiguous(data, fmt):
    """Whether the array ``data`` is laid out densely in ``fmt``'s order (PyTorch ignores the
    strides of size-1 axes)."""
    fmt = check(fmt, "is_contiguous", contiguous_format)
    if fmt is preserve_format or fmt is contiguous_format:
        return bool(data.flags.c_contiguous)
    order = _ORDER[fmt]
    if data.ndim != len(order):
        return False
    want = _dense_strides(data.shape, order, data.itemsize)
    return all(n == 1 or s == w for n, s, w in zip(data.shape, data.strides, want))


def suggest(data):
    """The format PyTorch reads off a tensor's strides: channels-last when a rank-4 (rank-5)
    tensor is laid out that way and not also row-major, else contiguous."""
    for fmt in (channels_last, channels_last_3d):
        if (data.ndim == len(_ORDER[fmt]) and not data.flags.c_contiguous
                and is_contiguous(data, fmt)):
            return fmt
    return contiguous_format


def relayout(data, fmt):
    """A copy of the array ``data`` laid out in ``fmt`` (values unchanged)."""
    check_rank(data.ndim, fmt)
    if fmt is preserve_format:
        return data.copy(order="K")
    if fmt is contiguous_format:
        return data.copy(order="C")
    order = _ORDER[fmt]
    inverse = [order.index(i) for i in range(len(order))]
    return data.transpose(order).copy(order="C").transpose(inverse)


def like(data, out, fmt):
    """``out`` (a fresh array of ``data``'s shape) given the layout ``fmt`` asks for, with
    ``preserve_format`` following ``data``'s stride order; for the ``*_like`` factories."""
    check_rank(data.ndim, fmt)
    if fmt is contiguous_format or (fmt is preserve_format and data.flags.c_contiguous):
        return out
    if fmt is not preserve_format:
        return relayout(out, fmt)
    order = sorted(range(data.ndim), key=lambda i: (-abs(data.strides[i]), i))
    inverse = [order.index(i) for i in range(len(order))]
    return out.transpose(order).copy(order="C").transpose(inverse)
