"""``torch.optim.SGD``."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .optimizer import Optimizer, _add_, _mul_, _plus, _wrap

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import ParamsT

__all__ = ["SGD", "sgd"]


def sgd(param, grad, momentum_buffer, *, lr, weight_decay, momentum, dampening, nesterov,
        maximize):
    """One SGD step, in place on the tensor ``param`` (and ``momentum_buffer``) for the
    gradient array ``grad``; returns the momentum buffer (a new one on the first step).

    ``g = -grad if maximize else grad``; ``g += weight_decay * p``; with momentum
    ``b = g`` (first step) else ``b = momentum * b + (1 - dampening) * g``, then
    ``g = g + momentum * b`` (nesterov) or ``g = b``; finally ``p = p - lr * g``.
    """
    d_p = -grad if maximize else grad
    if weight_decay != 0:
        d_p = _plus(d_p, param._data, weight_decay)
    if momentum != 0:
        if momentum_buffer is None:
            momentum_buffer = _wrap(np.array(d_p, copy=True))
        else:
            _mul_(momentum_buffer, momentum)
            _add_(momentum_buffer, d_p, 1 - dampening)
        b = momentum_buffer._data
        d_p = _plus(d_p, b, momentum) if nesterov else b
    _add_(param, d_p, -lr)
    return momentum_buffer


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with (Nesterov) momentum.

    Update rule (per parameter ``p`` with gradient ``g``)::

        g = -g if maximize;  g = g + weight_decay * p
        b = g (first step) | momentum * b + (1 - dampening) * g
        g = g + momentum * b if nesterov else b          (when momentum != 0)
        p = p - lr * g
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)

    def _update(self, group):
        hyper = {k: group[k] for k in ("lr", "weight_decay", "momentum", "dampening",
                                       "nesterov", "maximize")}
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            if hyper["momentum"] == 0:  # no state
                sgd(p, grad._data, None, **hyper)
            else:
                state = self.state[p]
                state["momentum_buffer"] = sgd(p, grad._data, state.get("momentum_buffer"),
                                               **hyper)
