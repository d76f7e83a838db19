"""``torch.exp_(x)`` and PyTorch's other in-place functions: ``x.exp_()`` under the name
``torch.exp_``, for each in-place method PyTorch also exposes as a function.

PyTorch's ``torch.X_(input, ...)`` is its method ``input.X_(...)`` (same checks, same result:
``input`` itself, written in place); only a non-Tensor ``input`` is refused differently, with
the argument parser's TypeError, as here.
"""
from __future__ import annotations

from ._tensor import Tensor

# PyTorch 2.13's ``torch.X_`` functions whose method ``Tensor.X_`` ember has (the others:
# dropout variants, ``embedding_renorm_``, sparse and quantized forms, are not functions of
# this kind in ember). tests/test_inplace_functions.py checks the list against PyTorch.
NAMES = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_",
    "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_",
    "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "gcd_",
    "index_put_", "lcm_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_",
    "negative_", "rad2deg_", "reciprocal_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_",
    "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_"
)


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
