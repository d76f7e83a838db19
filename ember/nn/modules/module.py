"""``torch.nn.modules.module``: PyTorch's path for ``Module`` (ember defines it in
``ember/nn/module.py``); programs import it from here or name it by it."""
from ..module import Module  # noqa: F401

__all__ = ["Module"]
