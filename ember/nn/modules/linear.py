"""``Identity``, ``Linear``, ``Bilinear``, ``Flatten``, ``Unflatten``."""
from __future__ import annotations

import math

from ... import _creation
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin

__all__ = ["Identity", "Linear", "Bilinear", "Flatten", "Unflatten", "LazyLinear"]


def _empty(*shape, device=None, dtype=None):
    kw = {}
    if device is not None:
        kw["device"] = device
    if dtype is not None:
        kw["dtype"] = dtype
    return _creation.empty(*shape, **kw)


def _weight_and_bias(module, weight_shape, bias_size, device, dtype):
    """Give ``module`` an uninitialised ``weight`` of ``weight_shape`` and a ``bias`` of
    ``bias_size`` (a ``None`` bias where that is None), then draw them with
    ``module.reset_parameters()``: the setup of Linear, Bilinear and the convolutions."""
    module.weight = Parameter(_empty(*weight_shape, device=device, dtype=dtype))
    if bias_size is not None:
        module.bias = Parameter(_empty(bias_size, device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)
    module.reset_parameters()


def _kaiming_reset(module, draw_bias_without_fan_in):
    """The default draw of Linear's and the convolutions' parameters: the weight from
    ``kaiming_uniform_(a=sqrt(5))``, the bias from ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``.
    Where fan_in is 0, Linear still draws the bias (from ``U(0, 0)``) and a convolution
    leaves it, as PyTorch's do (the random stream moves accordingly)."""
    init.kaiming_uniform_(module.weight, a=math.sqrt(5))
    if module.bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(module.weight)
        if fan_in != 0 or draw_bias_without_fan_in:
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(module.bias, -bound, bound)


class Identity(Module):
    """Returns its input unchanged (arguments are accepted and ignored)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x A^T + b``."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in_features), out_features if bias else None,
                         device, dtype)

    def reset_parameters(self):
        _kaiming_reset(self, draw_bias_without_fan_in=True)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """A ``Linear`` under another name (PyTorch's quantization tooling tells them apart); the
    output projection of ``MultiheadAttention``."""


class Bilinear(Module):
    """``y = x1^T A x2 + b``."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in1_features, in2_features),
                         out_features if bias else None, device, dtype)

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class Flatten(Module):
    """Flattens dims ``start_dim`` to ``end_dim`` into one."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expands dim ``dim`` into the shape ``unflattened_size``."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, int):
            if not isinstance(unflattened_size, (tuple, list)):
                raise TypeError("unflattened_size must be tuple of ints, but found type "
                                f"{type(unflattened_size).__name__}")
            for idx, elem in enumerate(unflattened_size):
                if not isinstance(elem, int):
                    raise TypeError("unflattened_size must be tuple of ints, but found "
                                    f"element of type {type(elem).__name__} at pos {idx}")
        else:
            raise TypeError("invalid argument type for dim parameter")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is the last dim of the first input."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.in_features = input.shape[-1]
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()
