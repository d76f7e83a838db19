"""``torch.nn.modules.module``: where PyTorch defines ``Module``; ember defines it in
``ember/nn/module.py``."""
from ..module import Module, _addindent, _IncompatibleKeys  # noqa: F401

__all__ = ["Module"]
