"""``DataParallel`` and ``data_parallel``: run a module over a batch split across GPUs.

Without a GPU, PyTorch's ``DataParallel`` is a transparent wrapper: ``forward`` calls the
wrapped ``.module``, and ``state_dict`` keys carry its ``module.`` prefix. ember does the same.
With one GPU (CuPy), the module moves there and each call moves its tensor arguments there, as
PyTorch's one-device path does. Splitting a batch over several GPUs (replicas, scatter, gather)
is not implemented in ember: it raises rather than quietly using one device, because the
results differ (batch-norm statistics come from the first replica's share only).
"""
from __future__ import annotations

from typing import Generic, TypeVar

from ... import cuda
from ..._device import device as _device
from ..._tensor import Tensor
from ..module import Module

__all__ = ["DataParallel", "data_parallel"]

T = TypeVar("T", bound=Module)


def _device_index(d):
    """A GPU index from an int, ``"cuda:1"`` or ``device("cuda", 1)``."""
    return d if isinstance(d, int) else (_device(d).index or 0)


def _gpu_ids(device_ids, output_device):
    """The GPUs to use and the output GPU; only one GPU is supported."""
    if device_ids is None:
        device_ids = range(cuda.device_count())
    device_ids = [_device_index(d) for d in device_ids]
    if not device_ids:
        raise RuntimeError("no available devices were found")
    if len(device_ids) > 1:
        raise NotImplementedError(
            f"DataParallel over several GPUs (device_ids={device_ids}) is not implemented in "
            "ember; pass device_ids=[0] or call the module directly")
    out = device_ids[0] if output_device is None else _device_index(output_device)
    return device_ids, out


def _to(obj, dev):
    """``obj`` with every tensor in it (through tuples, lists and dicts) moved to ``dev``."""
    if isinstance(obj, Tensor):
        return obj.to(dev)
    if isinstance(obj, (tuple, list)):
        moved = [_to(x, dev) for x in obj]
        return type(obj)(*moved) if hasattr(obj, "_fields") else type(obj)(moved)
    if isinstance(obj, dict):
        return type(obj)((k, _to(v, dev)) for k, v in obj.items())
    return obj


def _check_on(module, dev):
    for t in (*module.parameters(), *module.buffers()):
        if t.device != dev:
            raise RuntimeError(f"module must have its parameters and buffers on device {dev} "
                               f"(device_ids[0]) but found one of them on device: {t.device}")


class DataParallel(Module, Generic[T]):
    """Wraps ``module``; calling the wrapper runs ``module`` (see the module docstring).

    Args:
        module: the module to run.
        device_ids: GPU indices (all GPUs by default; ignored without a GPU).
        output_device: the GPU the outputs are gathered on (``device_ids[0]`` by default).
        dim: the dim the batch is split along.

    Example:
        >>> model = nn.DataParallel(nn.Linear(2, 3))
        >>> list(model.state_dict())
        ['module.weight', 'module.bias']
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not cuda.is_available():
            self.module = module
            self.device_ids = []
            return
        self.dim = dim
        self.module = module
        self.device_ids, self.output_device = _gpu_ids(device_ids, output_device)
        self.src_device_obj = _device("cuda", self.device_ids[0])
        self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        _check_on(self.module, self.src_device_obj)
        return self.module(*_to(inputs, self.src_device_obj), **_to(kwargs, self.src_device_obj))


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """The functional form of ``DataParallel``: ``module(*inputs, **module_kwargs)`` on the GPUs
    (a GPU is required, as in PyTorch)."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not cuda.is_available():
        raise RuntimeError("device type could not be determined")
    device_ids, _ = _gpu_ids(device_ids, output_device)
    dev = _device("cuda", device_ids[0])
    _check_on(module, dev)
    return module(*_to(inputs, dev), **_to(module_kwargs or {}, dev))
