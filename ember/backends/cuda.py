"""``torch.backends.cuda``: cuBLAS matmul precision and the attention-kernel switches.

ember's GPU path is CuPy, whose matmuls do not read these flags: they are kept so scripts can
set and read them (``torch.backends.cuda.matmul.allow_tf32 = True``), with PyTorch's checks.
``matmul.allow_tf32`` and ``torch.get_float32_matmul_precision()`` are one setting, as in
PyTorch ("highest" is TF32 off, "high"/"medium" on).
"""
import contextlib
import importlib.util
import warnings

__all__ = ["is_built", "matmul", "sdp_kernel", "flash_sdp_enabled", "enable_flash_sdp",
           "mem_efficient_sdp_enabled", "enable_mem_efficient_sdp", "math_sdp_enabled",
           "enable_math_sdp", "cudnn_sdp_enabled", "enable_cudnn_sdp",
           "is_flash_attention_available", "get_float32_matmul_precision",
           "set_float32_matmul_precision"]


def is_built():
    """Whether ember can run CUDA at all: True when CuPy is installed (a GPU may still be
    absent; ``torch.cuda.is_available()`` says whether one is usable)."""
    return importlib.util.find_spec("cupy") is not None


_PRECISIONS = ("highest", "high", "medium")
_matmul_precision = ["highest"]


def get_float32_matmul_precision():
    """``torch.get_float32_matmul_precision()``: "highest", "high" or "medium"."""
    return _matmul_precision[0]


def set_float32_matmul_precision(precision):
    """``torch.set_float32_matmul_precision``. ember always multiplies float32 in float32
    (NumPy/CuPy), so the setting is kept for reading back and does not change results."""
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the "
                      "currentsetFloat32MatmulPrecision call has no effect.", stacklevel=2)
        return
    _matmul_precision[0] = precision


def _reduction_flag(name):
    def check(value):
        if isinstance(value, (tuple, list)) and value and all(
                isinstance(v, bool) for v in value):
            if len(value) > 1 and value[0] and not value[1]:
                raise RuntimeError("allow_splitk=False is not supported when reduced "
                                   "precision reductions are enabled")
            return value[0]
        if not isinstance(value, bool):
            raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got "
                            f"{type(value)}")
        return value
    return check


class cuBLASModule:
    """``torch.backends.cuda.matmul``: the cuBLAS flags, as attributes."""

    _checks = {
        "allow_fp16_reduced_precision_reduction":
            _reduction_flag("allow_fp16_reduced_precision_reduction"),
        "allow_bf16_reduced_precision_reduction":
            _reduction_flag("allow_bf16_reduced_precision_reduction"),
    }

    def __init__(self):
        object.__setattr__(self, "_values", {"allow_fp16_reduced_precision_reduction": True,
                                             "allow_bf16_reduced_precision_reduction": True})

    def __getattr__(self, name):
        if name == "allow_tf32":
            return _matmul_precision[0] != "highest"
        if name in self._values:
            return self._values[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            if not isinstance(value, bool):
                raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got "
                                   f"{type(value).__name__}")
            _matmul_precision[0] = "high" if value else "highest"
        elif name in self._checks:
            self._values[name] = self._checks[name](value)
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = cuBLASModule()

# Scaled-dot-product-attention kernels. On the CPU ember has PyTorch's two, math and flash
# (``nn/attention``), and reads the flash switch as PyTorch does; the others are kept so that
# scripts can read back what they set.
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}
# PyTorch's C++ setters name these in their errors (three of them say "math").
_SDP_SETTER = {"flash": "set_sdp_use_math", "mem_efficient": "set_sdp_use_math",
               "math": "set_sdp_use_math", "cudnn": "set_sdp_use_cudnn"}


def _set_sdp(kind, enabled):
    if not isinstance(enabled, bool):
        # PyTorch's message for cudnn carries a stray "%s"; kept so the text matches.
        stray = "%s" if kind == "cudnn" else ""
        raise RuntimeError(f"{_SDP_SETTER[kind]} expects a bool, but got "
                           f"{stray}{type(enabled).__name__}")
    _sdp[kind] = enabled


def flash_sdp_enabled():
    return _sdp["flash"]


def enable_flash_sdp(enabled):
    _set_sdp("flash", enabled)


def mem_efficient_sdp_enabled():
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled):
    _set_sdp("mem_efficient", enabled)


def math_sdp_enabled():
    return _sdp["math"]


def enable_math_sdp(enabled):
    _set_sdp("math", enabled)


def cudnn_sdp_enabled():
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled):
    _set_sdp("cudnn", enabled)


def is_flash_attention_available():
    """ember has no flash-attention kernel."""
    return False


def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True,
               enable_cudnn=True):
    """Deprecated in PyTorch (with a FutureWarning) for ``torch.nn.attention.sdpa_kernel``:
    sets the four switches for the ``with`` block and restores them after it."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this "
                  "context manager will be removed. Please see "
                  "`torch.nn.attention.sdpa_kernel()` for the new context manager, with "
                  "updated signature.", FutureWarning, stacklevel=2)
    return _sdp_switches(enable_flash, enable_math, enable_mem_efficient, enable_cudnn)


@contextlib.contextmanager
def _sdp_switches(enable_flash, enable_math, enable_mem_efficient, enable_cudnn):
    saved = dict(_sdp)
    try:
        for kind, on in (("flash", enable_flash), ("math", enable_math),
                         ("mem_efficient", enable_mem_efficient), ("cudnn", enable_cudnn)):
            _set_sdp(kind, on)
        yield {}
    finally:
        _sdp.update(saved)
