"""``torch.optim.Rprop``."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .optimizer import Optimizer, _addcmul_, _in_place, _wrap, _zeros

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import ParamsT

__all__ = ["Rprop", "rprop"]


@_in_place
def _copy_(x, value):
    np.copyto(x, value)


@_in_place
def _scale_clamped_(x, factor, low, high):
    np.multiply(x, factor, out=x)
    np.clip(x, low, high, out=x)


def rprop(param, grad, prev, step_size, *, etaminus, etaplus, step_size_min, step_size_max,
          maximize):
    """One Rprop step, in place on ``param``, ``prev`` (the last gradient used) and the
    per-element ``step_size``: where the gradient keeps its sign the step grows by
    ``etaplus``, where it flips the step shrinks by ``etaminus`` (clamped to
    ``step_sizes``) and that element skips this update; ``p = p - sign(g) * step``."""
    if maximize:
        grad = -grad
    sign = np.sign(grad * prev._data)
    factor = np.where(sign > 0, etaplus, np.where(sign < 0, etaminus, 1)).astype(sign.dtype)
    _scale_clamped_(step_size, factor, step_size_min, step_size_max)
    grad = np.where(factor == factor.dtype.type(etaminus), 0, grad).astype(grad.dtype)
    _addcmul_(param, np.sign(grad), step_size._data, -1)
    _copy_(prev, grad)


class Rprop(Optimizer):
    """Resilient backpropagation (Riedmiller & Braun, 1993): per-element steps adapted from
    the signs of successive gradients, whose magnitude is ignored."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, group):
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        def init(p):
            return {"prev": _zeros(p),
                    "step_size": _wrap(np.full_like(p.grad._data, group["lr"]))}
        for p, state in self._stepped(group, init):
            rprop(p, p.grad._data, state["prev"], state["step_size"], etaminus=etaminus,
                  etaplus=etaplus, step_size_min=step_size_min, step_size_max=step_size_max,
                  maximize=group["maximize"])
