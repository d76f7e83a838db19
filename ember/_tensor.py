"""``ember.Tensor``: an array (NumPy or CuPy) plus autograd metadata.

The class holds the mechanics — metadata, conversions, Python protocols, in-place writes and
view bookkeeping. The math lives in ``ember/ops/``; functions such as ``ember.exp`` are bound
as methods in ``ember/_tensor_methods.py``, so ``x.exp()`` and ``ember.exp(x)`` are one function
(the operators too, indexing included). This module imports neither autograd nor the ops: the
few methods that are their work (``backward``, the history of a view written in place...)
call them through ``ember/_upcalls.py``, whose slots those layers fill when imported.
"""
from __future__ import annotations

import math
import re
import warnings
import weakref
from typing import TYPE_CHECKING, Any, SupportsIndex, overload

import numpy as np

from . import _autograd_state, _device, _dispatch, _dtypes, _errors, _memory_format, _recording, _xp
from ._autograd_state import NO_ACCUMULATOR, _RemovableHandle, note_write
from ._printing import tensor_repr
from ._upcalls import upcalls

__all__ = ["Tensor", "Size", "layout", "strided"]

if TYPE_CHECKING:  # the methods bound at import, declared by tools/tensor_stub.py
    import builtins
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from types import ModuleType

    from ._memory_format import memory_format as MemoryFormat
    from ._tensor_stub import TensorMethods as _BoundMethods
    from ._typing import DeviceLike, Number
    from .autograd.graph import Node
else:
    _BoundMethods = object

_state = _autograd_state.grad_state  # (``autograd.grad_mode._state``)
_forward = _autograd_state.forward_state  # (``autograd.forward_ad.state``)
_dispatching = _dispatch.state
_INEXACT = _dtypes._INEXACT_TYPES  # the classes of the floating and complex dtypes


class Size(tuple[int, ...]):
    """``torch.Size``: a tuple of ints that prints as ``torch.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def numel(self) -> int:
        return math.prod(self)

    @overload
    def __getitem__(self, item: SupportsIndex) -> int: ...
    @overload
    def __getitem__(self, item: slice) -> Size: ...

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r

    def __add__(self, other: Iterable[int]) -> Size:  # type: ignore[override]
        return Size(tuple.__add__(self, tuple(other)))


class layout:
    """``torch.layout``: how a tensor's elements are stored; ember has ``strided`` only."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"


strided = layout("strided")
_layout = layout  # (the name ``layout`` in the class below is its property)


class Tensor(_BoundMethods):
    """A multi-dimensional array that can record the operations applied to it.

    Example:
        >>> x = ember.tensor([1.0, 2.0], requires_grad=True)
        >>> (x * x).sum().backward()
        >>> x.grad
        tensor([2., 4.])
    """

    __slots__ = ("_data", "_rg", "_grad_fn", "_grad", "_vc", "_output_nr", "_base", "_view_fn",
                 "_creation_meta", "_acc", "_hooks", "_retains_grad", "_vv", "__dict__",
                 "__weakref__")
    # Rare state lives in the instance __dict__ (made on first use), as do users' own
    # attributes (PyTorch tensors accept them too).
    _fw = None  # the forward-mode tangent, inside autograd.forward_ad.dual_level
    __array_priority__ = 1000  # ``ndarray * tensor`` defers to the tensor, as in PyTorch

    # ------------------------------------------------------------------ construction
    def __init__(self, *args: Any, device: DeviceLike = None) -> None:
        # Legacy ``torch.Tensor(data)`` / ``torch.Tensor(2, 3)``: the default dtype.
        src = upcalls.legacy_new(_dtypes.get_default_dtype(), args, device)
        self._setup(src._data, None, False)

    def _setup(self, data, grad_fn, requires_grad):
        self._data = data
        self._rg = requires_grad
        self._grad_fn = grad_fn
        self._grad = None
        self._vc = [0]  # the version counter, shared with views and detach()
        self._output_nr = 0
        self._base = None
        self._view_fn = None
        self._creation_meta = None  # views only: how the view was made (see autograd.views)
        self._acc = None
        self._hooks = None
        self._retains_grad = False

    @staticmethod
    def _make(data, grad_fn, requires_grad):
        """Wrap a raw array as a new Tensor (no copy); ``grad_fn`` is the node that made it."""
        t = object.__new__(Tensor)
        # _setup inlined: this runs once per op, on the hot path
        t._data = data
        t._rg = requires_grad
        t._grad_fn = grad_fn
        t._grad = None
        t._vc = [0]
        t._output_nr = 0
        t._base = t._view_fn = t._creation_meta = t._acc = t._hooks = None
        t._retains_grad = False
        return t

    # ------------------------------------------------------------------ metadata
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    @overload
    def size(self, dim: None = None) -> Size: ...
    @overload
    def size(self, dim: int) -> int: ...

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim, False)]

    @property
    def dtype(self) -> _dtypes.dtype:
        return _dtypes.from_numpy_dtype(self._data.dtype)

    @property
    def device(self) -> _device.device:
        return _device.device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        return not isinstance(self._data, np.ndarray)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    def is_floating_point(self) -> bool:
        return _dtypes.is_floating(self._data.dtype)

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    def is_signed(self) -> bool:
        return self.dtype.is_signed

    def is_nonzero(self) -> bool:
        """The truth of a one-element tensor; PyTorch's error for any other size."""
        if self._data.size == 0:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
        return bool(self)

    def is_same_size(self, other: Tensor) -> bool:
        return self._data.shape == other._data.shape

    def is_inference(self) -> bool:
        """False: ember's ``inference_mode`` is ``no_grad`` and makes no inference tensors."""
        return False

    def get_device(self) -> int:
        """The CUDA device index, or -1 on the CPU."""
        return -1 if isinstance(self._data, np.ndarray) else self.device.index

    @property
    def is_cpu(self) -> bool:
        return isinstance(self._data, np.ndarray)

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def layout(self) -> _layout:
        return strided

    # ember has only dense, CPU/CUDA, unquantized tensors
    is_sparse = is_quantized = is_meta = False
    # nor tensors of PyTorch's other backends and layouts
    is_xpu = is_mps = is_ipu = is_maia = is_mtia = is_vulkan = is_xla = False
    is_mkldnn = is_nested = is_sparse_csr = False

    def storage_offset(self) -> int:
        """Where this tensor starts in its storage, in elements (nonzero for views)."""
        data = self._data
        if not isinstance(data, np.ndarray):
            return (data.data.ptr - data.data.mem.ptr) // data.itemsize
        root = data
        while isinstance(root.base, np.ndarray):
            root = root.base
        return (data.__array_interface__["data"][0] -
                root.__array_interface__["data"][0]) // data.itemsize

    def is_contiguous(self, *args: Any, memory_format: MemoryFormat | None = None) -> bool:
        """Whether the array is laid out densely in ``memory_format``'s order (default
        row-major); see ``ember._memory_format``."""
        if args:
            raise TypeError(f"is_contiguous() takes 0 positional arguments but {len(args)} "
                            "was given")
        return _memory_format.is_contiguous(self._data, memory_format)

    @overload
    def stride(self, dim: None = None) -> tuple[int, ...]: ...
    @overload
    def stride(self, dim: int) -> int: ...

    def stride(self, dim=None):
        data = self._data
        if data.size:
            st = tuple(s // data.itemsize for s in data.strides)
        else:  # NumPy gives empty arrays zero strides; PyTorch the contiguous ones
            st = _memory_format.contiguous_strides(data.shape)
        return st if dim is None else st[_wrap_dim(dim, data.ndim, False)]

    def data_ptr(self) -> int:
        return self._data.__array_interface__["data"][0] if isinstance(self._data, np.ndarray) \
            else self._data.data.ptr

    @overload
    def type(self, dtype: None = None) -> str: ...
    @overload
    def type(self, dtype: _dtypes.dtype | str | builtins.type) -> Tensor: ...

    def type(self, dtype=None):
        """The legacy type name (``'torch.FloatTensor'``), or a copy converted to ``dtype``."""
        if dtype is None:
            prefix = "torch." if not self.is_cuda else "torch.cuda."
            return prefix + self.dtype._legacy
        if isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), _dtypes.dtype):
            dtype = dtype.dtype  # a legacy class (``torch.IntTensor``)
        if isinstance(dtype, (str, type)):
            name = dtype if isinstance(dtype, str) else dtype.__name__
            dtype = next((d for d in _dtypes.ALL if d._legacy == name.rsplit(".", 1)[-1]), None)
            if dtype is None:
                raise ValueError(f"invalid type: '{name}'")
        return self.to(dtype)

    @property
    def _version(self):
        return self._vc[0]

    @property
    def output_nr(self) -> int:
        if self._base is not None:
            upcalls.fresh(self)
        return self._output_nr

    @property
    def _is_view(self):
        return self._base is not None

    def _is_view_fn(self):
        return self._base is not None

    # ------------------------------------------------------------------ autograd metadata
    @property
    def requires_grad(self) -> bool:
        base = self._base  # a view requires grad when its base does (PyTorch reads, not remakes)
        return self._rg or base is not None and base._rg

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set whether autograd records ops on this leaf; returns self."""
        if self._base is not None:
            upcalls.fresh(self)
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(_errors.NONLEAF_REQUIRES_GRAD)
            return self
        if requires_grad and not _dtypes.is_inexact(self._data.dtype):
            raise RuntimeError(_errors.INT_REQUIRES_GRAD)
        # (a view made in no-grad mode of a tensor that requires grad goes on requiring it)
        rg = bool(requires_grad) or self._acc is NO_ACCUMULATOR
        if rg != self._rg and _recording.state.recorder is not None:
            _recording.state.recorder.requires_grad_set(self)
        self._rg = rg
        return self

    @property
    def is_leaf(self) -> bool:
        if self._base is not None:
            upcalls.fresh(self)
        return self._grad_fn is None

    @property
    def grad_fn(self) -> Node | None:
        if self._base is not None:
            upcalls.fresh(self)
        return self._grad_fn

    @property
    def grad(self) -> Tensor | None:
        if self._base is not None:
            upcalls.fresh(self)
        if self._grad is None and self._grad_fn is not None and not self._retains_grad:
            warnings.warn(_errors.NONLEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError("assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor "
                    f"of size '{list(self.shape)}'. Please ensure that the gradient and the "
                    "tensor are the same size")
            if value.dtype != self.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{value.dtype._c_name}' to a "
                    f"tensor with grad_dtype '{self.dtype._word}'. The gradient must "
                    "match the tensor's grad_dtype (defaults to the tensor's dtype). You can set "
                    "the tensor's grad_dtype attribute with a specific dtype, or None to allow "
                    "any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor "
                    "and its gradient may break downstream systems that assume they match.")
        if _recording.state.recorder is not None:  # (compiled mode replays the write)
            _recording.state.recorder.set_grad(self, value, _set_grad)
            return
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor during backward (no-op on leaves)."""
        if self._base is not None:
            upcalls.fresh(self)
        if self._grad_fn is None:
            if not self._rg:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if not self._retains_grad:
            self._retains_grad = True
            ref = weakref.ref(self)

            def keep(grad):
                t = ref()
                if t is not None:
                    if t._grad is None:
                        t._grad = grad.detach().clone() if not grad.requires_grad else grad
                    else:
                        t._grad = t._grad + grad
            self._add_hook(keep, retain=True)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> _RemovableHandle:
        """Call ``hook(grad)`` whenever this tensor's gradient is computed.

        The hook may return a new gradient to use in its place. Returns a handle whose
        ``remove()`` unregisters it.
        """
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        return self._add_hook(hook)

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]
                                           ) -> _RemovableHandle:
        """Call ``hook(self)`` after a backward has accumulated into this leaf's ``.grad``.

        The hook reads (or uses, as an optimizer step would) ``self.grad`` and returns None.
        Returns a handle whose ``remove()`` unregisters it.
        """
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        return self._add_hook(_PostAccumulateGradHook(hook))

    def _add_hook(self, hook, retain=False):
        if self._base is not None:
            upcalls.fresh(self)
        if self._grad_fn is None:
            if self._hooks is None:
                self._hooks = []
            lst = self._hooks
        else:
            fn = self._grad_fn
            if fn._pre_hooks is None:
                fn._pre_hooks = []
            lst = fn._pre_hooks
            hook = _TensorHook(hook, self._output_nr, retain)
        lst.append(hook)
        return _RemovableHandle(lst, hook)

    def backward(self, gradient: Tensor | None = None, retain_graph: bool | None = None,
                 create_graph: bool = False,
                 inputs: Tensor | Sequence[Tensor] | None = None) -> None:
        """Accumulate d(self)/d(leaf) into the ``.grad`` of every leaf that requires grad.

        ``gradient`` is the vector in the vector-Jacobian product; it may be omitted only when
        ``self`` has one element (the implicit ``1.0``).
        """
        upcalls.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> Tensor:
        """A tensor sharing storage and version counter, cut from the graph."""
        t = Tensor._make(self._data, None, False)
        t._vc = self._vc
        if _recording.state.recorder is not None:  # (compiled mode: a tensor the call made)
            _recording.state.recorder.detached(t)
        return t

    def detach_(self) -> Tensor:
        if self._base is not None and self._grad_fn is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are "
                               "using DistributedDataParallel (DDP) for training, and "
                               "gradient_as_bucket_view is set as True, gradients are views "
                               "of DDP buckets, and hence detach_() cannot be called on these "
                               "gradients. To fix this error, please refer to the "
                               "Optimizer.zero_grad() function in torch/optim/optimizer.py "
                               "as the solution.")
        if _recording.state.recorder is not None and (self._grad_fn is not None or self._rg):
            _recording.state.recorder.requires_grad_set(self)  # (a replay redoes no flags)
        self._grad_fn = None
        self._rg = False
        return self

    @property
    def data(self) -> Tensor:
        """The same storage without history; writes through it are invisible to autograd."""
        t = Tensor._make(self._data, None, False)
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        _recording.unsupported("`tensor.data = ...` gives a tensor another storage (not "
                               "recorded yet)")
        self._data = value._data

    # ------------------------------------------------------------------ conversions
    def item(self) -> Number:
        _recording.read("item")
        if self._data.size != 1:
            raise RuntimeError(_errors.ITEM_NUMEL.format(n=self._data.size))
        return self._data.item() if type(self._data) is np.ndarray \
            else _device.to_numpy(self._data).reshape(()).item()

    def tolist(self) -> Any:
        _recording.read("tolist")
        return _device.to_numpy(self._data).tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        _recording.read("numpy")
        _no_numpy_for(self._data.dtype)
        if self._rg and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if self.is_cuda:
            if not force:
                raise TypeError("can't convert cuda:0 device type tensor to numpy. Use "
                                "Tensor.cpu() to copy the tensor to host memory first.")
            return _device.to_numpy(self._data)
        return self._data

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        _recording.read("__array__")
        _no_numpy_for(self._data.dtype)
        arr = _device.to_numpy(self._data)
        return arr if dtype is None else arr.astype(dtype)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(_errors.BOOL_AMBIGUOUS)
        return bool(self.item())

    def _scalar(self):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __float__(self) -> float:
        return float(self._scalar())

    def __int__(self) -> int:
        return int(self._scalar())

    def __complex__(self) -> complex:
        return complex(self._scalar())

    def __index__(self) -> int:
        _recording.read("__index__")
        data = self._data
        if data.dtype.kind not in "iub" or data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(data.item() if type(data) is np.ndarray else self.item())

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        _recording.read("__repr__")
        return tensor_repr(self)

    __str__ = __repr__

    def __hash__(self) -> int:
        return id(self)

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        return (_rebuild, (_device.to_numpy(self._data), self._rg))

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.  If you were "
                               "attempting to deepcopy a module, this may be because of a "
                               "torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        t = Tensor._make(self._data.copy(), None, self._rg)
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = t
        return t

    def __array_namespace__(self, api_version: str | None = None) -> ModuleType:
        return upcalls.array_namespace

    # ------------------------------------------------------------------ in-place machinery
    def _check_inplace(self):
        """PyTorch's errors for writing in place into a leaf (or its view) that requires grad."""
        if _state.grad:
            base = self._base
            if base is not None:
                upcalls.fresh(self)
                if self._creation_meta is not None and self._rg:
                    upcalls.check_rebase(self)
                if base._rg and base._grad_fn is None:
                    raise RuntimeError(_errors.VIEW_OF_LEAF_INPLACE)
            if self._rg and self._grad_fn is None:
                raise RuntimeError(_errors.LEAF_INPLACE)

    def _inplace(self, fn, *args, **kwargs):
        """Run ``fn(self, *args)`` out of place, write the result into self, rebase history.
        (Never autocast: PyTorch's in-place ops run in their tensors' dtypes.)"""
        self._check_inplace()
        if _dispatching.active:  # (autocast may be on: in-place ops are never autocast)
            result = upcalls.not_autocast(fn, self, *args, **kwargs)
        else:
            result = fn(self, *args, **kwargs)
        return self._assign(result, getattr(fn, "__name__", "").strip("_") + "_")

    def _assign(self, result, name=None):
        """Write ``result`` (made from self's old value) into self's storage; rebase autograd.
        ``name``: the in-place op, for error messages (see ``anomaly_mode.note_write``)."""
        out = result._data
        if out.dtype != self._data.dtype:
            if _dtypes.from_numpy_dtype(out.dtype).category > self.dtype.category:
                raise RuntimeError(f"result type {_dtype_word(out.dtype)} can't be cast to the "
                                   f"desired output type {_dtype_word(self._data.dtype)}")
        if out.shape != self._data.shape:
            raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the "
                               f"broadcast shape {list(out.shape)}")
        node = result._grad_fn
        if node is not None and type(self._data.dtype) not in _INEXACT:
            node = None  # an integer or bool tensor never requires grad: the write is data only
        if node is not None and self._creation_meta is not None:
            upcalls.check_rebase(self)
        target = self._data
        if type(target) is np.ndarray and not target.flags.writeable:
            target = _xp.writable(target)
        if node is not None and hasattr(node, "snapshot_input"):
            node.snapshot_input(self)
        _recording.opaque(_write, target, out)
        note_write(self, name or _inplace_name(node))
        if _recording.state.recorder is not None:
            _recording.state.recorder.wrote(self)
        if _forward.level is not None and (result._fw is not None or self._fw is not None):
            upcalls.write_tangent(self, result._fw)
        if node is not None:
            if getattr(node, "_ans", None) is not None:
                node._ans = self._data
                node._ans_vc = ((self._vc, self._vc[0]),)
            old = (self._grad_fn, self._output_nr)
            if self._base is None:
                self._grad_fn, self._output_nr, self._rg = node, 0, True
            else:
                upcalls.rebase_view(self, node)
            if self._retains_grad:
                _move_retain_hook(old, self._grad_fn)
        return self


def _write(target, out):
    """``target[...] = out``, ``out`` cast to ``target``'s dtype first (an in-place op's write)."""
    target[...] = out if out.dtype == target.dtype else out.astype(target.dtype)


def _set_grad(tensor, value):
    tensor._grad = value


class _TensorHook:
    """A tensor hook stored on its grad_fn, applied to the gradient of one output."""

    __slots__ = ("fn", "output_nr", "retain")

    def __init__(self, fn, output_nr, retain):
        self.fn, self.output_nr, self.retain = fn, output_nr, retain


class _PostAccumulateGradHook:
    """A leaf's post-accumulate-grad hook, kept with its tensor hooks; run after ``.grad``."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn


def _move_retain_hook(old, node):
    """``retain_grad`` follows a tensor to the history an in-place write gives it (``old``: its
    former ``(grad_fn, output_nr)``), as in PyTorch: its ``.grad`` is then the new value's."""
    fn, nr = old
    hooks = fn._pre_hooks if fn is not None and fn._pre_hooks else ()
    for hook in hooks:
        if isinstance(hook, _TensorHook) and hook.retain and hook.output_nr == nr:
            hooks.remove(hook)
            if node._pre_hooks is None:
                node._pre_hooks = []
            node._pre_hooks.append(_TensorHook(hook.fn, 0, True))
            return


def _inplace_name(node):
    """``index_put_`` for an ``IndexPutBackward0`` node: the in-place op that wrote a result."""
    if node is None:
        return "an in-place op"
    name = re.sub(r"Backward\d*$", "", type(node).__name__)
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower() + "_"


def _no_numpy_for(np_dtype):
    """PyTorch's TypeError for a tensor whose dtype NumPy lacks (bfloat16), which ``numpy()``
    and ``__array__`` do not hand out (ember holds them as ml_dtypes arrays, but NumPy code
    given those would compute in them: convert with ``.float()`` first, as in PyTorch)."""
    if type(np_dtype) in _dtypes.NUMPY_LACKS:
        raise TypeError(f"Got unsupported ScalarType {_dtype_word(np_dtype)}")


def _dtype_word(np_dtype):
    """PyTorch's word for an array dtype in messages ('Float', 'Long'): ``dtype._word``."""
    return _dtypes.from_numpy_dtype(np_dtype)._word


def _wrap_dim(dim, ndim, scalar=True):
    """A dim in ``[-ndim, ndim)`` made non-negative, with PyTorch's IndexError otherwise.
    A 0-d tensor takes dims 0 and -1, unless ``scalar`` is False (it has no dim to name)."""
    if ndim == 0 and not scalar:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(_errors.DIM_RANGE.format(lo=-n, hi=n - 1, dim=dim))
    return dim % n


def _rebuild(array, requires_grad):
    return Tensor._make(np.array(array), None, requires_grad)


