"""``torch.optim.Adagrad``."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .optimizer import Optimizer, _add_, _addcdiv_, _addcmul_, _plus, _step_tensor, _wrap

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import ParamsT

__all__ = ["Adagrad", "adagrad"]


def adagrad(param, grad, state_sum, step, *, lr, weight_decay, lr_decay, eps, maximize):
    """One Adagrad step (``step`` already incremented), in place on the tensors ``param`` and
    ``state_sum`` for the gradient array ``grad``.

    ``g = -g if maximize; g += wd * p; clr = lr / (1 + (t - 1) * lr_decay);``
    ``s = s + g * g; p = p - clr * g / (sqrt(s) + eps)``.
    """
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = _plus(grad, param._data, weight_decay)
    clr = lr / (1 + (step - 1) * lr_decay)
    _addcmul_(state_sum, grad, grad)
    std = np.sqrt(state_sum._data)
    std += eps
    _addcdiv_(param, grad, std, -clr)


class Adagrad(Optimizer):
    """Adagrad (Duchi et al.).

    Update rule, at step ``t``::

        g = -g if maximize;  g = g + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g**2        (s starts at initial_accumulator_value)
        p = p - clr * g / (sqrt(s) + eps)
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0, eps: float = 1e-10,
                 foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _step_tensor()
                state["sum"] = _wrap(np.full_like(p._data, group["initial_accumulator_value"]))

    def _update(self, group):
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            _add_(state["step"], 1)
            adagrad(p, p.grad._data, state["sum"], float(state["step"]._data), lr=group["lr"],
                    weight_decay=group["weight_decay"], lr_decay=group["lr_decay"],
                    eps=group["eps"], maximize=group["maximize"])
