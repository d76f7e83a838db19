"""``torch.backends.mha``: the switch for PyTorch's fused inference kernels of
``MultiheadAttention`` and ``TransformerEncoder(Layer)`` (on by default).

ember has no such kernels, but where they would give other values than the general path
(NaN for a query with every key masked out, zeros at the padded positions of a
``TransformerEncoder``...), ember gives those values while the switch is on, as PyTorch does;
with it off, both compute the general path. See ``ember/nn/modules/transformer.py``.
"""
from __future__ import annotations

_is_fastpath_enabled = True


def get_fastpath_enabled():
    """Whether the fast path may run (it still runs only where its conditions hold)."""
    return _is_fastpath_enabled


def set_fastpath_enabled(value):
    """Turn the fast path on or off; like PyTorch, any value is kept as given."""
    global _is_fastpath_enabled
    _is_fastpath_enabled = value
