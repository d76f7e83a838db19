"""``ember.nn.functional``: stateless neural-network functions."""
from ..ops.nn_ops import binary_cross_entropy_with_logits

__all__ = ["binary_cross_entropy_with_logits"]
