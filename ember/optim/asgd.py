"""``torch.optim.ASGD``."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._checks import check_args
from .optimizer import Optimizer, _add_, _in_place, _mul_, _step_tensor, _zeros

if TYPE_CHECKING:
    from .._tensor import Tensor
    from .optimizer import ParamsT

__all__ = ["ASGD", "asgd"]


@_in_place
def _set_(x, value):
    np.copyto(x, value)


def asgd(param, grad, ax, eta, mu, step, *, lr, lambd, alpha, t0, weight_decay, maximize):
    """One ASGD step (``step`` already incremented), in place on ``param``, the running
    average ``ax`` and the float32 scalars ``eta`` (step size) and ``mu`` (averaging rate)::

        g = -g if maximize;  g = g + weight_decay * p
        p = p * (1 - lambd * eta) - eta * g
        ax = ax + (p - ax) * mu      (ax = p while mu is 1)
        eta = lr / (1 + lambd * lr * t) ** alpha;  mu = 1 / max(1, t - t0)
    """
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = grad + weight_decay * param._data
    eta_value = float(eta._data)
    _mul_(param, 1 - lambd * eta_value)
    _add_(param, grad, -eta_value)
    if float(mu._data) != 1:
        delta = param._data - ax._data
        delta *= mu._data
        _add_(ax, delta)
    else:
        _set_(ax, param._data)
    _set_(eta, np.float32(lr / ((1 + lambd * lr * step) ** alpha)))
    _set_(mu, np.float32(1 / max(1, step - t0)))


class ASGD(Optimizer):
    """Averaged stochastic gradient descent (Polyak & Juditsky): SGD with a decaying step,
    keeping in ``state['ax']`` the average of the iterates from step ``t0`` on."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        check_args(lr, weight_decay=weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, group):
        for p, state in self._stepped(group, lambda p: {"eta": _step_tensor(group["lr"]),
                                                        "mu": _step_tensor(1.0),
                                                        "ax": _zeros(p)}):
            asgd(p, p.grad._data, state["ax"], state["eta"], state["mu"],
                 float(state["step"]._data), lr=group["lr"], lambd=group["lambd"],
                 alpha=group["alpha"], t0=group["t0"], weight_decay=group["weight_decay"],
                 maximize=group["maximize"])
