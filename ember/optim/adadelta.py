"""``torch.optim.Adadelta``."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._checks import check_args
from .optimizer import Optimizer, _add_, _addcmul_, _mul_, _zeros

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import ParamsT

__all__ = ["Adadelta", "adadelta"]


def adadelta(param, grad, square_avg, acc_delta, *, lr, rho, eps, weight_decay, maximize):
    """One Adadelta step, in place on the tensors ``param``, ``square_avg`` and ``acc_delta``
    for the gradient array ``grad``::

        g = -g if maximize;  g = g + weight_decay * p
        s = rho * s + (1 - rho) * g * g
        delta = sqrt(a + eps) / sqrt(s + eps) * g
        a = rho * a + (1 - rho) * delta * delta
        p = p - lr * delta
    """
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = grad + weight_decay * param._data
    _mul_(square_avg, rho)
    _addcmul_(square_avg, grad, grad, 1 - rho)
    std = np.sqrt(square_avg._data + eps)
    delta = np.sqrt(acc_delta._data + eps)
    delta /= std
    delta *= grad
    _mul_(acc_delta, rho)
    _addcmul_(acc_delta, delta, delta, 1 - rho)
    _add_(param, delta, -lr)


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012): step sizes from running averages of squared gradients and
    squared updates; ``lr`` scales the update (1.0 by default, as in the paper)."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_args(lr, eps, weight_decay=weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, group):
        for p, state in self._stepped(group, lambda p: {"square_avg": _zeros(p),
                                                        "acc_delta": _zeros(p)}):
            adadelta(p, p.grad._data, state["square_avg"], state["acc_delta"], lr=group["lr"],
                     rho=group["rho"], eps=group["eps"], weight_decay=group["weight_decay"],
                     maximize=group["maximize"])
