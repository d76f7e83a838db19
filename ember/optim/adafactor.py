"""``torch.optim.Adafactor`` (Shazeer & Stern, 2018, as PyTorch implements it)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._tensor import Tensor
from .._typeinfo import finfo
from .optimizer import Optimizer, _add_, _lerp_, _mul_, _wrap

if TYPE_CHECKING:
    from .optimizer import ParamsT

__all__ = ["Adafactor"]


def _scalar(lr):
    return float(lr.item()) if isinstance(lr, Tensor) else lr


def _square_norm(a, axis):
    """``norm(a, dim=axis, keepdim=True).square()``: the sum of squares along ``axis``."""
    return np.square(np.sqrt(np.sum(np.square(a), axis=axis, keepdims=True)))


def adafactor(param, grad, state, *, lr, beta2_decay, eps1, eps2, d, weight_decay, maximize):
    """One Adafactor step on ``param`` (``state['step']`` already raised)::

        beta2_t' = t**beta2_decay;  rho = min(lr, 1/sqrt(t))
        alpha = max(eps2, rms(p)) * rho;  p *= 1 - lr * weight_decay
        matrices: R = lerp(R, mean_j g^2, beta2_t'), C = lerp(C, mean_i g^2, beta2_t'),
                  v = R C / max(mean(R), eps1);  vectors: v = lerp(v, g^2, beta2_t')
        u = g / sqrt(max(v, eps1^2));  p -= alpha / max(1, rms(u) / d) * u
    """
    if maximize:
        grad = -grad
    t = float(state["step"]._data)
    beta2_t = t ** beta2_decay
    rho = min(lr, 1 / t ** 0.5)
    p = param._data
    numel = max(p.size, 1)
    alpha = max(eps2, float(np.sqrt(np.sum(np.square(p)))) / numel ** 0.5) * rho
    if weight_decay != 0:
        _mul_(param, 1 - lr * weight_decay)
    if grad.ndim > 1:
        row, col = state["row_var"], state["col_var"]
        _lerp_(row, _square_norm(grad, -1) / grad.shape[-1], beta2_t)
        _lerp_(col, _square_norm(grad, -2) / grad.shape[-2], beta2_t)
        estimate = np.matmul(row._data, col._data)
        estimate /= np.maximum(row._data.mean(axis=-2, keepdims=True), eps1)
    else:
        _lerp_(state["variance"], grad * grad, beta2_t)
        estimate = state["variance"]._data.copy()
    update = 1 / np.sqrt(np.maximum(estimate, eps1 * eps1))
    update *= grad
    denom = max(1.0, float(np.sqrt(np.sum(np.square(update)))) / (update.size ** 0.5 * d))
    _add_(param, update, -alpha / denom)


class Adafactor(Optimizer):
    """Adafactor: Adam-like steps with the second moment of each matrix kept as a row and a
    column vector (their outer product estimates it), the step size relative to the
    parameter's RMS, and the update clipped by its own RMS."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    @staticmethod
    def _init_state(p):
        g = p.grad._data
        if g.ndim > 1:
            return {"row_var": _wrap(np.zeros(g.shape[:-1] + (1,), g.dtype)),
                    "col_var": _wrap(np.zeros(g.shape[:-2] + (1, g.shape[-1]), g.dtype))}
        return {"variance": _wrap(np.zeros_like(g))}

    def _update(self, group):
        eps1, eps2 = group["eps"]
        for p in group["params"]:
            if p.grad is not None and p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
        for p, state in self._stepped(group, self._init_state):
            if eps1 is None:  # the first parameter's dtype decides, for the group (PyTorch's)
                eps1 = float(finfo(p.dtype).eps)
            adafactor(p, p.grad._data, state, lr=_scalar(group["lr"]),
                      beta2_decay=group["beta2_decay"], eps1=eps1, eps2=eps2, d=group["d"],
                      weight_decay=group["weight_decay"], maximize=group["maximize"])

