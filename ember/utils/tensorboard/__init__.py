"""``torch.utils.tensorboard``: ``SummaryWriter``, logging to TensorBoard's event files.

As in PyTorch, this needs the ``tensorboard`` package (it is not a dependency of ember):
without it, importing this module raises the same ModuleNotFoundError PyTorch's does.
"""
import tensorboard

if tuple(int(p) for p in tensorboard.__version__.split(".")[:2]) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

del tensorboard

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "SummaryWriter"]
