"""``nn.Parameter``: a Tensor that a Module registers as one of its parameters."""
from .. import _dtypes
from .._creation import empty
from .._device import device_of
from .._tensor import Tensor


class Parameter(Tensor):
    """A leaf Tensor, ``requires_grad=True`` by default, sharing storage with ``data``."""

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        p = object.__new__(cls)
        p._setup(data._data, None, False)
        p._vc = data._vc
        if requires_grad and not _dtypes.is_inexact(data._data.dtype):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        p._rg = bool(requires_grad)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (Tensor.__reduce_ex__(self, protocol), self.requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        p = Parameter(self.detach().clone(), self.requires_grad)
        memo[id(self)] = p
        return p


def _rebuild_parameter(reduced, requires_grad):
    fn, args = reduced
    return Parameter(fn(*args).detach(), requires_grad)



class _BufferMeta(type):
    """``isinstance(t, Buffer)`` holds for a Tensor that ``Buffer(...)`` marked."""

    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)


class Buffer(metaclass=_BufferMeta):
    """``nn.Buffer(tensor, persistent=True)``: a Tensor that, assigned to a Module attribute,
    registers as a buffer (``persistent=False`` keeps it out of the ``state_dict``). As in
    PyTorch, what comes back is a plain Tensor sharing ``data``'s storage, marked for the
    assignment."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t._is_buffer = True
        t.persistent = persistent
        return t


_DATA_SLOT = Tensor.__dict__["_data"]  # the Tensor's own array slot, read past the guard below


def _uninitialized_error(what):
    return ValueError(
        f"Attempted to use an uninitialized parameter in {what}. This error happens when you "
        "are using a `LazyModule` or explicitly manipulating "
        "`torch.nn.parameter.UninitializedParameter` objects. When using LazyModules Call "
        "`forward` with a dummy batch to initialize the parameters before calling torch "
        "functions")


class UninitializedTensorMixin:
    """A parameter or buffer whose shape is not known yet (the lazy modules' placeholders).
    Until ``materialize(shape)`` gives it an array, any use of its values raises PyTorch's
    ValueError: the array slot ``_data`` is guarded, so every op, method and view that reads
    it stops there instead of computing with a placeholder. ``materialize`` turns the object
    into a plain ``cls_to_become`` (Parameter, or Tensor for a buffer) in place."""

    __slots__ = ()
    cls_to_become = None

    @property
    def _data(self):
        raise _uninitialized_error(f"a {type(self).__name__}")

    @_data.setter
    def _data(self, value):
        _DATA_SLOT.__set__(self, value)

    @property
    def dtype(self):
        return _dtypes.from_numpy_dtype(_DATA_SLOT.__get__(self).dtype)

    @property
    def device(self):
        return device_of(_DATA_SLOT.__get__(self))

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually "
            "happens in `load_state_dict` when trying to load an uninitialized parameter into "
            "an initialized one. Call `forward` to initialize the parameters before accessing "
            "their attributes.")

    def materialize(self, shape, device=None, dtype=None):
        """Give the placeholder an (uninitialised) array of ``shape`` and make it a
        ``cls_to_become``; ``device``/``dtype`` default to the placeholder's."""
        kw = {"dtype": self.dtype if dtype is None else dtype}
        kw["device"] = self.device if device is None else device
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self._data = empty(shape, **kw)._data
        self.__class__ = self.cls_to_become

    def __repr__(self):
        return f"<{type(self).__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (type(self), (self.requires_grad,))

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, dtype=self.dtype)
        return memo[id(self)]


def _placeholder(cls, requires_grad, device, dtype):
    t = object.__new__(cls)
    kw = {} if dtype is None else {"dtype": dtype}
    if device is not None:
        kw["device"] = device
    t._setup(empty(0, **kw)._data, None, False)
    t._rg = bool(requires_grad)
    return t


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape the lazy module infers on its first forward."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return _placeholder(cls, requires_grad, device, dtype)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape the lazy module infers on its first forward."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = _placeholder(cls, requires_grad, device, dtype)
        t.persistent = persistent
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass


def is_lazy(param: object) -> bool:
    """Whether ``param`` is a lazy module's placeholder, not yet given its shape."""
    return isinstance(param, UninitializedTensorMixin)
