"""``torch.optim.lr_scheduler``: learning-rate schedules (PyTorch's chainable forms).

The public module of two: ``_lr_core.py`` holds ``LRScheduler`` and the classic schedules,
``_schedules.py`` the warm-ups, decays, cyclic and composite ones built on it.
"""
from __future__ import annotations

from ._lr_core import (  # noqa: F401  (EPOCH_DEPRECATION_WARNING, _LRScheduler: PyTorch's)
    EPOCH_DEPRECATION_WARNING,
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    LRScheduler,
    MultiStepLR,
    ReduceLROnPlateau,
    StepLR,
    _LRScheduler,
)
from ._schedules import (
    ChainedScheduler,
    ConstantLR,
    CosineAnnealingWarmRestarts,
    CyclicLR,
    LinearLR,
    MultiplicativeLR,
    OneCycleLR,
    PolynomialLR,
    SequentialLR,
)
from .optimizer import Optimizer  # noqa: F401  (importable from here, as before)

__all__ = ["LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "ExponentialLR",
           "CosineAnnealingLR", "ReduceLROnPlateau", "MultiplicativeLR", "ConstantLR", "LinearLR",
           "PolynomialLR", "SequentialLR", "ChainedScheduler", "OneCycleLR",
           "CosineAnnealingWarmRestarts", "CyclicLR"]
