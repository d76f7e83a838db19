"""The argument checks PyTorch's optimizers share, in its order and with its messages."""
from __future__ import annotations


def check_args(lr, eps=0.0, betas=None, weight_decay=0.0):
    """Learning rate, epsilon, betas (when given), weight decay: each must be >= 0 (betas in
    [0, 1)); PyTorch's ValueError names the first that is not."""
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if betas is not None:
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
