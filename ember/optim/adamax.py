"""``torch.optim.Adamax``."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._checks import check_args
from .optimizer import Optimizer, _addcdiv_, _lerp_, _maximum_, _mul_, _zeros

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import ParamsT

__all__ = ["Adamax", "adamax"]


def adamax(param, grad, exp_avg, exp_inf, step, *, lr, beta1, beta2, eps, weight_decay,
           maximize):
    """One Adamax step (``step`` already incremented), in place on ``param``, ``exp_avg`` and
    ``exp_inf`` for the gradient array ``grad``::

        g = -g if maximize;  g = g + weight_decay * p
        m = lerp(m, g, 1 - beta1);  u = max(beta2 * u, |g| + eps)
        p = p - lr / (1 - beta1**t) * m / u
    """
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = grad + weight_decay * param._data
    _lerp_(exp_avg, grad, 1 - beta1)
    _mul_(exp_inf, beta2)
    bound = np.abs(grad)
    bound += eps
    _maximum_(exp_inf, bound)
    _addcdiv_(param, exp_avg._data, exp_inf._data, -(lr / (1 - beta1 ** step)))


class Adamax(Optimizer):
    """Adamax (Kingma & Ba, section 7.1): Adam with the infinity norm in place of the second
    moment."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        check_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, group):
        beta1, beta2 = group["betas"]
        for p, state in self._stepped(group, lambda p: {"exp_avg": _zeros(p),
                                                        "exp_inf": _zeros(p)}):
            adamax(p, p.grad._data, state["exp_avg"], state["exp_inf"],
                   float(state["step"]._data), lr=group["lr"], beta1=beta1, beta2=beta2,
                   eps=group["eps"], weight_decay=group["weight_decay"],
                   maximize=group["maximize"])
