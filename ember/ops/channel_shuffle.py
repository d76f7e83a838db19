"""``channel_shuffle``: ShuffleNet's permutation of channels, ``(N, g * k, *)`` -> channels
taken one from each of the ``g`` groups in turn. A permutation, so its derivative is the
inverse shuffle (``k`` groups), itself an op: derivatives of any order, nodes named
``ChannelShuffleBackward0`` as PyTorch's."""
from __future__ import annotations

from .nn_layers import _apply
from .registry import defop

__all__ = []
METHODS = {}
INPLACE = ()


@defop("channel_shuffle", n_in=1, jvp="linear")
def _channel_shuffle(xp, input, groups):
    n, c = input.shape[:2]
    rest = input.shape[2:]
    grouped = input.reshape(n, groups, c // groups, *rest)
    return xp.ascontiguousarray(xp.swapaxes(grouped, 1, 2)).reshape(input.shape)


_channel_shuffle.defvjp(lambda xp, g, ans, input, groups:
                        _apply(_channel_shuffle, xp, g, input.shape[1] // groups))
