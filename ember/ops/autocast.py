"""The dispatch side of autocast (``torch.autocast``): its per-thread state, PyTorch's op lists
for the CPU, and the casts an op makes under them before it runs.

PyTorch's autocast is a dispatch key: an op on its lists casts its floating tensor arguments
and runs once with autocast off for everything it calls. ember does the same at two places
that share ``run``:

- a registry op whose name is on a list (``mm``, ``addmm``, ``convolution``, ``mse_loss``,
  ``cat`` ...) is checked in ``Op.__call__`` (``ops/registry.py``);
- a composite that PyTorch lists under its own name (``linear``, ``matmul``, ``conv2d``,
  ``cross_entropy`` ...) is declared with ``@autocast_op("name")``.

Policies, as PyTorch names them:

- ``lower_precision_fp``: floating tensors (float64 excepted) are cast to the autocast dtype
  (bfloat16 unless chosen); a float32 leaf that requires grad is cast once per autocast
  region and the cast reused (the weight cache, when ``cache_enabled``);
- ``fp32``: floating tensors are cast to float32;
- ``promote``: floating tensors are cast to the widest floating dtype among them.
- ``off`` (ember's): nothing is cast, and what the op calls is not autocast: for ops PyTorch
  computes in one kernel on no list, which ember composes from listed ones (``bilinear``).

Ops on no list run in their inputs' dtypes, so ``bf16_result + float32_tensor`` is float32 by
the ordinary promotion. This module is global state (per thread), as PyTorch's autocast is.

ember implements PyTorch's CPU lists; ``device_type='cuda'`` with a GPU present raises
(PyTorch's CUDA lists differ and are not implemented), and without one it is disabled with
PyTorch's warning (``amp/autocast_mode.py``).
"""
from __future__ import annotations

import functools
import threading
from typing import TYPE_CHECKING, Any, TypeVar

from .. import _dispatch, _dtypes
from .._upcalls import install

if TYPE_CHECKING:
    from collections.abc import Callable

_Fn = TypeVar("_Fn", bound="Callable[..., Any]")

__all__ = ["autocast_op", "not_autocast", "state", "run", "CPU_POLICY"]

_LOWER, _FP32, _PROMOTE, _OFF = "lower_precision_fp", "fp32", "promote", "off"

# PyTorch's CPU lists (aten/src/ATen/autocast_mode.cpp, AutocastCPU), by ATen op name. ember's
# registry ops and ``@autocast_op`` composites are looked up here by those names.
CPU_POLICY = dict.fromkeys((
    "conv1d", "conv2d", "conv3d", "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm",
    "_addmm_activation", "addbmm", "linear", "_convolution", "convolution", "matmul",
    "conv_tbc", "mkldnn_rnn_layer", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "prelu", "scaled_dot_product_attention", "_native_multi_head_attention"), _LOWER)
CPU_POLICY.update(dict.fromkeys((
    "avg_pool3d", "binary_cross_entropy", "grid_sampler", "polar", "prod", "quantile",
    "nanquantile", "stft", "cdist", "grid_sampler_2d", "grid_sampler_3d", "trace",
    "view_as_complex", "cholesky", "cholesky_inverse", "cholesky_solve", "inverse", "lu_solve",
    "orgqr", "ormqr", "pinverse", "max_pool3d", "max_unpool2d", "max_unpool3d",
    "adaptive_avg_pool3d", "reflection_pad1d", "reflection_pad2d", "replication_pad1d",
    "replication_pad2d", "replication_pad3d", "mse_loss", "cosine_embedding_loss", "nll_loss",
    "nll_loss2d", "hinge_embedding_loss", "poisson_nll_loss", "smooth_l1_loss",
    "cross_entropy_loss", "l1_loss", "huber_loss", "margin_ranking_loss", "soft_margin_loss",
    "triplet_margin_loss", "multi_margin_loss", "ctc_loss", "kl_div", "multilabel_margin_loss",
    "binary_cross_entropy_with_logits", "fft_fft", "fft_ifft", "fft_fft2", "fft_ifft2",
    "fft_fftn", "fft_ifftn", "fft_rfft", "fft_irfft", "fft_rfft2", "fft_irfft2", "fft_rfftn",
    "fft_irfftn", "fft_hfft", "fft_ihfft", "linalg_cond", "linalg_matrix_rank", "linalg_solve",
    "linalg_cholesky", "linalg_svdvals", "linalg_eigvals", "linalg_eigvalsh", "linalg_inv",
    "linalg_householder_product", "linalg_tensorinv", "linalg_tensorsolve", "geqrf",
    "_lu_with_info", "qr", "svd", "triangular_solve", "fractional_max_pool2d",
    "fractional_max_pool3d", "adaptive_max_pool3d", "multilabel_margin_loss_forward",
    "linalg_qr", "linalg_cholesky_ex", "linalg_svd", "linalg_eig", "linalg_eigh",
    "linalg_lstsq", "linalg_inv_ex"), _FP32))
CPU_POLICY.update(dict.fromkeys(("stack", "cat", "index_copy"), _PROMOTE))
# PyTorch ops on no list that ember composes from listed ones: run with autocast off, as
# PyTorch runs them (bilinear is one kernel, _trilinear, in PyTorch).
CPU_POLICY.update(dict.fromkeys(("bilinear",), _OFF))


class _State(threading.local):
    """This thread's autocast settings (PyTorch's are thread-local too)."""

    def __init__(self):
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = {"cpu": _dtypes.bfloat16, "cuda": _dtypes.float16}
        self.cache_enabled = True
        self.nesting = 0
        self.cache = {}  # id(float32 leaf) -> (leaf, its cast): the weight cache
        self.inside = False  # an autocast op is running: what it calls is not autocast


state = _State()


class _Anywhere:
    """How many autocast regions are enabled, in all threads: zero keeps the autocast
    interposer (``_dispatch.py``) inactive, so op calls skip the per-thread test."""

    _enabled = 0

    @property
    def enabled(self):
        return self._enabled

    @enabled.setter
    def enabled(self, count):
        self._enabled = count
        _dispatch.refresh()


anywhere = _Anywhere()


def _interpose(op, args, proceed):
    """The autocast interposer: an op on PyTorch's lists runs on cast arguments (``run``)."""
    if op.autocast is not None:
        result = run(op.autocast, op, args)  # (NotImplemented: off here)
        if result is not NotImplemented:
            return result
    return proceed(args)


_dispatch.register(_dispatch.Interposer("autocast", 10, lambda: anywhere._enabled > 0,
                                        _interpose))


def policy_of(name):
    """The CPU policy of the op PyTorch names ``name`` (None: not autocast)."""
    return CPU_POLICY.get(name)


def _eligible(t, device_type):
    """Whether autocast casts tensor ``t``: floating, on its device, not float64."""
    dt = t.dtype
    return dt.category == 2 and dt is not _dtypes.float64 and t.device.type == device_type


def _active_device(values):
    """The device type of the first tensor among ``values`` whose autocast is enabled here
    (None when there is none, or an autocast op is already running)."""
    st = state
    if st.inside:
        return None
    for v in values:
        for t in (v if isinstance(v, (list, tuple)) else (v,)):
            dev = getattr(t, "device", None)
            if dev is not None and hasattr(t, "_data") and st.enabled.get(dev.type):
                return dev.type
    return None


def _cast(t, dtype, device_type):
    from .shape import to_dtype  # lazy: ops.shape imports this module (autocast_op)
    if not _eligible(t, device_type) or t.dtype is dtype:
        return t
    st = state
    if (st.cache_enabled and dtype is st.dtype[device_type] and t.dtype is _dtypes.float32
            and t._rg and t._grad_fn is None and t._base is None):
        hit = st.cache.get(id(t))
        if hit is None or hit[0] is not t:
            hit = st.cache[id(t)] = (t, to_dtype(t, dtype))
        return hit[1]
    return to_dtype(t, dtype)


def cast_values(policy, values, device_type):
    """``values`` (tensors, lists of tensors, anything else) with the tensors cast for
    ``policy``."""
    if policy == _OFF:
        return values
    if policy == _LOWER:
        dtype = state.dtype[device_type]
    elif policy == _FP32:
        dtype = _dtypes.float32
    else:
        dtype = None
        for v in values:
            for t in (v if isinstance(v, (list, tuple)) else (v,)):
                if hasattr(t, "_data") and _eligible(t, device_type):
                    dtype = t.dtype if dtype is None else _dtypes.promote_types(dtype, t.dtype)
        if dtype is None:
            return values
    out = []
    for v in values:
        if isinstance(v, (list, tuple)):
            v = type(v)(_cast(t, dtype, device_type) if hasattr(t, "_data") else t for t in v)
        elif hasattr(v, "_data"):
            v = _cast(v, dtype, device_type)
        out.append(v)
    return out


def run(policy, fn, args, kwargs=None):
    """``fn(*args, **kwargs)`` under ``policy`` when autocast is enabled for the device of its
    tensors; NotImplemented when it is not (the caller runs ``fn`` as usual)."""
    kwargs = kwargs or {}
    device_type = _active_device((*args, *kwargs.values()))
    if device_type is None:
        return NotImplemented
    args = cast_values(policy, args, device_type)
    if kwargs:
        kwargs = dict(zip(kwargs, cast_values(policy, list(kwargs.values()), device_type)))
    st = state
    st.inside = True
    try:
        return fn(*args, **kwargs)
    finally:
        st.inside = False


@install
def not_autocast(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with autocast off for everything it calls (in-place ops)."""
    st = state
    was, st.inside = st.inside, True
    try:
        return fn(*args, **kwargs)
    finally:
        st.inside = was


def autocast_op(name: str) -> Callable[[_Fn], _Fn]:
    """Declare a composite as PyTorch's op ``name`` for autocast (see the module docstring)."""
    policy = CPU_POLICY[name]

    def wrap(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            if anywhere.enabled:
                out = run(policy, fn, args, kwargs)
                if out is not NotImplemented:
                    return out
            return fn(*args, **kwargs)
        return op
    return wrap
