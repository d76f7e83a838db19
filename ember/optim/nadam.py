"""``torch.optim.NAdam``."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._checks import check_args
from .optimizer import Optimizer, _addcdiv_, _addcmul_, _lerp_, _mul_, _step_tensor, _zeros

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import ParamsT

__all__ = ["NAdam", "nadam"]


def nadam(param, grad, exp_avg, exp_avg_sq, mu_product, step, *, lr, beta1, beta2, eps,
          weight_decay, momentum_decay, decoupled_weight_decay, maximize):
    """One NAdam step (``step`` already incremented), in place on ``param``, ``exp_avg``,
    ``exp_avg_sq`` and the float32 running product ``mu_product``::

        g = -g if maximize;  weight decay as in Adam (decoupled: p = p * (1 - lr * wd))
        mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay));  prod *= mu_t
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        d = sqrt(v / (1 - beta2**t)) + eps
        p = p - lr (1 - mu_t) / (1 - prod) * g / d - lr mu_{t+1} / (1 - prod mu_{t+1}) * m / d
    """
    if maximize:
        grad = -grad
    bias_correction2 = 1 - beta2 ** step
    if weight_decay != 0:
        if decoupled_weight_decay:
            _mul_(param, 1 - lr * weight_decay)
        else:
            grad = grad + weight_decay * param._data
    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
    _mul_(mu_product, mu)  # a float32 product, as PyTorch keeps it
    prod = float(mu_product._data)
    _lerp_(exp_avg, grad, 1 - beta1)
    _mul_(exp_avg_sq, beta2)
    _addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
    denom = np.sqrt(exp_avg_sq._data / bias_correction2)
    denom += eps
    _addcdiv_(param, grad, denom, -lr * (1.0 - mu) / (1.0 - prod))
    _addcdiv_(param, exp_avg._data, denom, (-lr * mu_next) / (1.0 - prod * mu_next))


class NAdam(Optimizer):
    """NAdam (Dozat, 2016): Adam with Nesterov momentum, its momentum warmed up by
    ``momentum_decay``."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_args(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, group):
        beta1, beta2 = group["betas"]
        for p, state in self._stepped(group, lambda p: {"mu_product": _step_tensor(1.0),
                                                        "exp_avg": _zeros(p),
                                                        "exp_avg_sq": _zeros(p)}):
            nadam(p, p.grad._data, state["exp_avg"], state["exp_avg_sq"], state["mu_product"],
                  float(state["step"]._data), lr=group["lr"], beta1=beta1, beta2=beta2,
                  eps=group["eps"], weight_decay=group["weight_decay"],
                  momentum_decay=group["momentum_decay"],
                  decoupled_weight_decay=group["decoupled_weight_decay"],
                  maximize=group["maximize"])
