"""``clip_grad_norm_`` and ``clip_grad_value_``."""
from __future__ import annotations

import sys

import numpy as np

from ... import _creation, _recording, linalg
from ..._autograd_state import note_write, writes_from
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...ops.reduction.norms import sum_of_squares
from ...ops.shape import stack

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _plain_arrays(tensors):
    """The NumPy arrays of ``tensors`` when they are plain tensors of one dtype, float32 or
    float64 (a model's gradients), for the fused paths below; None otherwise (the general
    one: other dtypes, mixed ones, subclasses, other devices)."""
    arrays = [t._data for t in tensors]
    dtype = arrays[0].dtype
    if dtype not in _FLOATS:
        return None
    for t, a in zip(tensors, arrays):
        if type(t) is not Tensor or type(a) is not np.ndarray or a.dtype != dtype:
            return None
    return arrays


def _total_2_norm(arrays):
    """The 2-norm of the arrays' 2-norms as a 0-d array (each a square root of a sum of
    squares in the arrays' dtype, as the op calls compute them). (A call compiled mode
    records.)"""
    norms = np.sqrt(np.array([sum_of_squares(a) for a in arrays], arrays[0].dtype))
    return np.asarray(np.sqrt(np.add.reduce(norms * norms)))


def _scale_all(arrays, coef):
    """Each array multiplied in place by the 0-d ``coef`` in the arrays' dtype. (A call
    compiled mode records.)"""
    coef = coef.astype(arrays[0].dtype)
    for a in arrays:
        np.multiply(a, coef, out=a)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return _creation.tensor(0.0)
    arrays = _plain_arrays(tensors) if norm_type == 2.0 else None
    if arrays is not None:
        # The 2-norms of the arrays and theirs, as the op calls below compute them (each a
        # square root of a sum of squares in the arrays' dtype), without an op call per
        # gradient (a GPT's 40: 3x PyTorch's time) and in one read of each array.
        total_norm = Tensor._make(_recording.opaque(_total_2_norm, arrays), None, False)
    else:
        norms = [linalg.vector_norm(g, norm_type) for g in tensors]
        total_norm = linalg.vector_norm(stack(norms), norm_type)
    if error_if_nonfinite and (bool(total_norm.isnan()) or bool(total_norm.isinf())):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total_norm


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    grads = _grads(parameters)
    if len(grads) == 0:
        return
    max_norm = float(max_norm)
    clip_coef = max_norm / (total_norm + 1e-6)
    clip_coef_clamped = clip_coef.clamp(max=1.0)
    arrays = _plain_arrays(grads)
    if arrays is not None and all(a.flags.writeable for a in arrays):
        # ``g.mul_(coef)`` on each array, without an op call per gradient (``mul_`` under
        # no_grad records nothing: the write and the version are all it does)
        _recording.opaque(_scale_all, arrays, clip_coef_clamped._data)
        with writes_from(sys._getframe(1)):  # (one walk to the user's line for all writes)
            for g in grads:
                note_write(g, "mul_")
        return
    with no_grad():
        for g in grads:
            g.mul_(clip_coef_clamped.to(g.dtype))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale the gradients in place so that their joint norm is at most ``max_norm``."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        parameters = list(parameters)
    with no_grad():
        grads = _grads(parameters)
        total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
        clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient in place to ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(min=-clip_value, max=clip_value)


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The deprecated name of ``clip_grad_norm_`` (warns, as PyTorch does, then clips)."""
    import warnings
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
