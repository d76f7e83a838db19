"""``torch.optim.RMSprop``."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .optimizer import Optimizer, _add_, _addcdiv_, _addcmul_, _lerp_, _mul_, _plus, _zeros

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import ParamsT

__all__ = ["RMSprop", "rmsprop"]


def rmsprop(param, grad, square_avg, grad_avg, momentum_buffer, *, lr, alpha, eps,
            weight_decay, momentum, centered, maximize):
    """One RMSprop step, in place on the tensors ``param``, ``square_avg``, ``grad_avg`` and
    ``momentum_buffer`` (the last two may be None) for the gradient array ``grad``.

    ``g = -g if maximize; g += wd * p; s = alpha * s + (1 - alpha) * g * g``;
    centered: ``a = lerp(a, g, 1 - alpha)``, ``avg = sqrt(s - a * a) + eps`` else
    ``avg = sqrt(s) + eps``; momentum: ``b = momentum * b + g / avg; p -= lr * b``, else
    ``p -= lr * g / avg``.
    """
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = _plus(grad, param._data, weight_decay)
    _mul_(square_avg, alpha)
    _addcmul_(square_avg, grad, grad, 1 - alpha)
    if centered:
        _lerp_(grad_avg, grad, 1 - alpha)
        a = grad_avg._data
        avg = np.sqrt(square_avg._data - a * a)  # addcmul(a, a, value=-1): s + (-a) * a
    else:
        avg = np.sqrt(square_avg._data)
    avg += eps
    if momentum > 0:
        _mul_(momentum_buffer, momentum)
        _addcdiv_(momentum_buffer, grad, avg)
        _add_(param, momentum_buffer._data, -lr)
    else:
        _addcdiv_(param, grad, avg, -lr)


class RMSprop(Optimizer):
    """RMSprop (Hinton), optionally centered and with momentum.

    Update rule::

        g = -g if maximize;  g = g + weight_decay * p
        s = alpha * s + (1 - alpha) * g**2
        a = alpha * a + (1 - alpha) * g;  denom = sqrt(s - a**2) + eps   (centered)
        denom = sqrt(s) + eps                                            (otherwise)
        b = momentum * b + g / denom;  p = p - lr * b                    (momentum > 0)
        p = p - lr * g / denom                                           (otherwise)
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, group):
        names = (("square_avg",) + (("momentum_buffer",) if group["momentum"] > 0 else ())
                 + (("grad_avg",) if group["centered"] else ()))
        for p, state in self._stepped(group, lambda p: {k: _zeros(p) for k in names}):
            rmsprop(p, p.grad._data, state["square_avg"], state.get("grad_avg"),
                    state.get("momentum_buffer"), lr=group["lr"], alpha=group["alpha"],
                    eps=group["eps"], weight_decay=group["weight_decay"],
                    momentum=group["momentum"], centered=group["centered"],
                    maximize=group["maximize"])
