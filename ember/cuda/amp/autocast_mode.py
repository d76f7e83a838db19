"""``torch.cuda.amp.autocast`` and ``custom_fwd``/``custom_bwd``: deprecated spellings of
``torch.amp``'s for ``device_type='cuda'``, which warn as PyTorch's do."""
from __future__ import annotations

import warnings

from ... import _dtypes
from ...amp import autocast_mode as _amp

__all__ = ["autocast", "custom_fwd", "custom_bwd"]


autocast = _amp._deprecated_autocast(
    "cuda", _dtypes.float16, __name__, "``torch.amp.autocast('cuda', ...)`` (deprecated).")


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``torch.amp.custom_fwd(..., device_type='cuda')`` (deprecated)."""
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.",
                  FutureWarning, stacklevel=2)
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """``torch.amp.custom_bwd(..., device_type='cuda')`` (deprecated)."""
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.",
                  FutureWarning, stacklevel=2)
    return _amp.custom_bwd(bwd, device_type="cuda")
