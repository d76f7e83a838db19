"""``torch.optim.SparseAdam``: Adam masked to the entries a sparse gradient holds.

ember has no sparse gradients yet (``nn.Embedding(sparse=True)`` refuses), so a step meets
dense gradients only, which PyTorch's SparseAdam refuses too, with the same error; the
constructor's checks are PyTorch's.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._tensor import Tensor
from .optimizer import Optimizer

if TYPE_CHECKING:
    from .optimizer import ParamsT

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Adam for parameters with sparse gradients (see the module docstring)."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        complex_params = [[i, j] for i, group in enumerate(self.param_groups)
                          for j, p in enumerate(group["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    def _update(self, group):
        for p in group["params"]:
            if p.grad is None:
                continue
            if not getattr(p.grad, "is_sparse", False):
                raise RuntimeError("SparseAdam does not support dense gradients, please "
                                   "consider Adam instead")
            raise NotImplementedError("ember: SparseAdam's step on a sparse gradient")
