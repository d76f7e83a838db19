"""``torch.exp_(x)`` and PyTorch's other in-place functions: ``x.exp_()`` under the name
``torch.exp_``, for each in-place method PyTorch also exposes as a function.

PyTorch's ``torch.X_(input, ...)`` is its method ``input.X_(...)`` (same checks, same result:
``input`` itself, written in place); only a non-Tensor ``input`` is refused differently, with
the argument parser's TypeError, as here.
"""
from __future__ import annotations

from . import _tensor_methods  # noqa: F401  (binds the in-place methods these functions call)
from ._tensor import Tensor

# PyTorch 2.13's ``torch.X_`` functions that are its method ``Tensor.X_`` (dropout variants,
# ``embedding_renorm_``, sparse and quantized forms are not functions of this kind; ``relu_``
# is ``ops/nn/activation.py``'s own). tests/test_inplace_functions.py checks the list against
# PyTorch. ember has those whose method it has: a new op's in-place form joins by itself.
PYTORCH_NAMES = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "as_strided_", "asin_", "asinh_", "atan_", "atanh_", "ceil_",
    "clamp_", "clamp_max_", "clamp_min_", "clip_", "conj_physical_", "cos_", "cosh_",
    "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_",
    "floor_", "frac_", "gcd_", "i0_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_",
    "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_",
    "resize_as_", "resize_as_sparse_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_",
    "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_",
)
NAMES = tuple(name for name in PYTORCH_NAMES if hasattr(Tensor, name))


def _function(name):
    def function(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``input.{name}(...)``: in place on ``input``, which it returns."
    return function


globals().update({name: _function(name) for name in NAMES})
__all__ = list(NAMES)
