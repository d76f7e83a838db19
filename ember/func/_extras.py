"""The smaller ``torch.func`` helpers: ``linearize``, ``functionalize``, ``debug_unwrap`` and
``replace_all_batch_norm_modules_``."""
from __future__ import annotations

import functools

from ..nn.modules.normalization import _BatchNorm
from ..ops import batching
from ._transforms import jvp

__all__ = ["linearize", "functionalize", "debug_unwrap", "replace_all_batch_norm_modules_"]


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian-vector product of
    ``func`` at ``primals`` (each call one forward-mode evaluation)."""
    output = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]
    return output, jvp_fn


def functionalize(func, *, remove="mutations"):
    """``func`` as PyTorch's functionalization leaves it for eager execution: the same values,
    and the same in-place updates of the inputs (ember has no graph capture for which
    removing mutations inside would matter)."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument "
                           f"for remove={remove}. Valid options are:\n     remove='mutations': "
                           "all inplace and out= operators will be removed from the program, "
                           "and replaced with their out-of-place equivalents.\n     "
                           "remove='mutations_and_views': In addition to the above, all aliasing "
                           "operators {view} will be replaced with their non-aliasing "
                           "counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapped


def debug_unwrap(tensor, *, recurse=True):
    """The whole batch under a ``vmap``'s per-sample view (for debugging only): the physical
    tensor, with every level's batch dim in front."""
    if type(tensor) is batching.BatchedTensor:
        return tensor._value
    return tensor


def replace_all_batch_norm_modules_(root):
    """Make every batch norm in ``root`` use the batch's statistics only (no running
    statistics), so that it can run under ``vmap``. In place; returns ``root``."""
    for module in root.modules():
        if isinstance(module, _BatchNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
