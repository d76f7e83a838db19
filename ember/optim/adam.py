"""``torch.optim.Adam``."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._checks import check_args
from .optimizer import (
    Optimizer,
    _addcdiv_,
    _addcmul_,
    _lerp_,
    _maximum_,
    _mul_,
    _over,
    _plus,
    _zeros,
)

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import ParamsT

__all__ = ["Adam", "adam"]


def adam(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, *, lr, beta1, beta2, eps,
         weight_decay, amsgrad, maximize, decoupled_weight_decay=False):
    """One Adam(W) step (``step`` already incremented), in place on the tensors ``param``,
    ``exp_avg``, ``exp_avg_sq`` and ``max_exp_avg_sq`` for the gradient array ``grad``::

        g = -g if maximize
        p = p * (1 - lr * wd) if decoupled else g = g + wd * p
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        vmax = max(vmax, v) if amsgrad
        p = p - lr / (1 - beta1**t) * m / (sqrt(v or vmax) / sqrt(1 - beta2**t) + eps)
    """
    if maximize:
        grad = -grad
    if weight_decay != 0:
        if decoupled_weight_decay:
            _mul_(param, 1 - lr * weight_decay)
        else:
            grad = _plus(grad, param._data, weight_decay)
    _lerp_(exp_avg, grad, 1 - beta1)
    _mul_(exp_avg_sq, beta2)
    _addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = bias_correction2 ** 0.5
    if amsgrad:
        _maximum_(max_exp_avg_sq, exp_avg_sq._data)
    denom = _over(np.sqrt((max_exp_avg_sq if amsgrad else exp_avg_sq)._data),
                  bias_correction2_sqrt)
    denom += eps
    _addcdiv_(param, exp_avg._data, denom, -step_size)


class Adam(Optimizer):
    """Adam (Kingma & Ba), with optional AMSGrad and decoupled weight decay.

    Update rule, at step ``t`` with gradient ``g``::

        g = -g if maximize;  g = g + weight_decay * p   (p *= 1 - lr*wd if decoupled)
        m = beta1 * m + (1 - beta1) * g;   v = beta2 * v + (1 - beta2) * g**2
        v_hat = max(v_hat, v) if amsgrad else v
        p = p - lr / (1 - beta1**t) * m / (sqrt(v_hat) / sqrt(1 - beta2**t) + eps)
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _update(self, group):
        beta1, beta2 = group["betas"]
        names = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ())
        for p, state in self._stepped(group, lambda p: {k: _zeros(p) for k in names}):
            adam(p, p.grad._data, state["exp_avg"], state["exp_avg_sq"],
                 state.get("max_exp_avg_sq"), float(state["step"]._data), lr=group["lr"],
                 beta1=beta1, beta2=beta2, eps=group["eps"], weight_decay=group["weight_decay"],
                 amsgrad=group["amsgrad"], maximize=group["maximize"],
                 decoupled_weight_decay=group.get("decoupled_weight_decay", False))


def _check_adam_args(lr, betas, eps, weight_decay):
    check_args(lr, eps, betas, weight_decay)
