"""``torch.optim.Muon``: momentum, then the update orthogonalized by a Newton-Schulz
iteration (Jordan et al., 2024), for 2-d parameters."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from .. import _dtypes
from .._tensor import Tensor
from .optimizer import Optimizer, _add_, _lerp_, _mul_, _wrap, _zeros

if TYPE_CHECKING:
    from .optimizer import ParamsT

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315  # the quintic's coefficients
DEFAULT_NS_STEPS = 5


def _bf16(a):
    """``a`` rounded to bfloat16 (kept as a float32 array): the iteration runs in bfloat16,
    each op computed in float32 and rounded once, as PyTorch's CPU kernels do."""
    return a.astype(_dtypes.bfloat16.np).astype(np.float32)


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """An approximate orthogonalization ``U S' V^T`` (S' near 1) of the 2-d array ``grad``:
    ``ns_steps`` quintic Newton-Schulz steps ``X <- a X + (b A + c A^2) X``, ``A = X X^T``,
    from ``X = grad / |grad|``, on the wide orientation; the result in bfloat16."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = _bf16(grad.astype(np.float32))
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    norm = _bf16(np.sqrt(np.sum(np.square(x), dtype=np.float32)))
    x = _bf16(x / _bf16(np.maximum(norm, np.float32(eps))))
    for _ in range(ns_steps):
        gram = _bf16(x @ x.T)
        gram_update = _bf16(b * gram + c * (gram @ gram))
        x = _bf16(a * x + gram_update @ x)
    return x.T if tall else x


def _adjust_lr(lr, adjust_lr_fn, shape):
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """Muon: SGD momentum (Nesterov by default) whose update is orthogonalized, the learning
    rate scaled by the matrix's shape (``adjust_lr_fn``), with decoupled weight decay."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B,
                                                                DEFAULT_C),
                 eps: float = EPS, ns_steps: int = DEFAULT_NS_STEPS,
                 adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                        adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _update(self, group):
        lr = group["lr"]
        lr = float(lr.item()) if isinstance(lr, Tensor) else lr
        momentum = group["momentum"]
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = _zeros(p.grad)
            grad = p.grad._data
            if grad.ndim != 2:
                raise ValueError("Param gradient must be a 2D matrix")
            buf = state["momentum_buffer"]
            _lerp_(buf, grad, 1 - momentum)
            if group["nesterov"]:
                update = _wrap(grad.copy())
                _lerp_(update, buf._data, momentum)  # grad.lerp(buf, momentum)
                update = update._data
            else:
                update = buf._data
            update = _zeropower_via_newtonschulz(update, group["ns_coefficients"],
                                                 group["ns_steps"], group["eps"])
            adjusted = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
            _mul_(p, 1 - lr * group["weight_decay"])
            _add_(p, update.astype(p._data.dtype) if p._data.dtype != np.float32 else update,
                  -adjusted)
