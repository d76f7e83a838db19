"""``torch.testing``: ``assert_close`` and ``make_tensor`` (PyTorch's deprecated
``assert_allclose`` is not provided)."""

from ._comparison import assert_close
from ._creation import make_tensor

__all__ = ["assert_close", "make_tensor"]
