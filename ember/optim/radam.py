"""``torch.optim.RAdam``."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._checks import check_args
from .optimizer import Optimizer, _add_, _addcmul_, _lerp_, _mul_, _zeros

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import ParamsT

__all__ = ["RAdam", "radam"]


def radam(param, grad, exp_avg, exp_avg_sq, step, *, lr, beta1, beta2, eps, weight_decay,
          decoupled_weight_decay, maximize):
    """One RAdam step (``step`` already incremented), in place on ``param``, ``exp_avg`` and
    ``exp_avg_sq``::

        m, v as in Adam;  m_hat = m / (1 - beta1**t)
        rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
        rho_t > 5:  p = p - lr * m_hat * sqrt(1 - beta2**t) / (sqrt(v) + eps) * r_t, with
                    r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
        otherwise:  p = p - lr * m_hat   (the variance is not yet tractable)
    """
    if maximize:
        grad = -grad
    if weight_decay != 0:
        if decoupled_weight_decay:
            _mul_(param, 1 - lr * weight_decay)
        else:
            grad = grad + weight_decay * param._data
    _lerp_(exp_avg, grad, 1 - beta1)
    _mul_(exp_avg_sq, beta2)
    _addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    update = exp_avg._data / bias_correction1
    update *= lr
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
    if rho_t > 5.0:
        root = np.sqrt(exp_avg_sq._data)
        root += eps
        # scalar / tensor is reciprocal() * scalar in PyTorch
        adaptive = np.reciprocal(root)
        adaptive *= bias_correction2 ** 0.5
        update *= adaptive
        update *= ((rho_t - 4) * (rho_t - 2) * rho_inf
                   / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
    _add_(param, update, -1.0)


class RAdam(Optimizer):
    """RAdam (Liu et al., 2019): Adam whose adaptive step is switched on, and rectified, once
    the variance of its estimate is tractable."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, group):
        beta1, beta2 = group["betas"]
        for p, state in self._stepped(group, lambda p: {"exp_avg": _zeros(p),
                                                        "exp_avg_sq": _zeros(p)}):
            radam(p, p.grad._data, state["exp_avg"], state["exp_avg_sq"],
                  float(state["step"]._data), lr=group["lr"], beta1=beta1, beta2=beta2,
                  eps=group["eps"], weight_decay=group["weight_decay"],
                  decoupled_weight_decay=group["decoupled_weight_decay"],
                  maximize=group["maximize"])
