"""``torch.nn.grad``: the gradients of a convolution with respect to its input and to its
weight, for custom ``autograd.Function`` backwards that need them.

ember computes each by differentiating the convolution itself (the same backward rule
``loss.backward()`` runs). The result is differentiable in turn when ``weight`` (or
``input``) or ``grad_output`` requires grad, as PyTorch's is; its ``grad_fn`` is the node of
ember's convolution backward, not PyTorch's ``ConvolutionBackwardBackward0``.
"""
from __future__ import annotations

from .._creation import zeros
from ..autograd import grad as _grad
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from . import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _check_grad_output(out, grad_output):
    """PyTorch's error for a ``grad_output`` not shaped like the convolution's output."""
    for i, (want, got) in enumerate(zip(out.shape, grad_output.shape)):
        if want != got or out.dim() != grad_output.dim():
            raise RuntimeError(f"Expected a tensor of dimension {out.dim()} and tensor.size[{i}] "
                               f"== {want} but got: dimension {grad_output.dim()} and "
                               f"tensor.size[{i}] = {got}")


def _gradient(conv, input, weight, grad_output, wrt, kwargs):
    """d conv(input, weight) / d (input or weight), contracted with ``grad_output``."""
    record = is_grad_enabled() and (grad_output.requires_grad or input.requires_grad
                                    or weight.requires_grad)
    with enable_grad():
        out = conv(input, weight, None, **kwargs)
        _check_grad_output(out, grad_output)
        target = input if wrt == "input" else weight
        return _grad(out, target, grad_output, create_graph=record)[0]


def _input_grad(conv):
    def grad_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
        x = zeros(tuple(input_size), dtype=grad_output.dtype, device=grad_output.device,
                  requires_grad=True)
        return _gradient(conv, x, weight, grad_output, "input",
                         dict(stride=stride, padding=padding, dilation=dilation, groups=groups))
    return grad_input


def _weight_grad(conv):
    def grad_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
        w = zeros(tuple(weight_size), dtype=grad_output.dtype, device=grad_output.device,
                  requires_grad=True)
        return _gradient(conv, input, w, grad_output, "weight",
                         dict(stride=stride, padding=padding, dilation=dilation, groups=groups))
    return grad_weight


def _named(fn, name, doc):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


conv1d_input, conv2d_input, conv3d_input = (
    _named(_input_grad(conv), f"conv{n}d_input",
           f"The gradient of ``conv{n}d`` with respect to an input of shape ``input_size``, "
           "given the ``grad_output`` of its output.")
    for n, conv in ((1, F.conv1d), (2, F.conv2d), (3, F.conv3d)))
conv1d_weight, conv2d_weight, conv3d_weight = (
    _named(_weight_grad(conv), f"conv{n}d_weight",
           f"The gradient of ``conv{n}d`` with respect to a weight of shape ``weight_size``, "
           "given ``input`` and the ``grad_output`` of the output.")
    for n, conv in ((1, F.conv1d), (2, F.conv2d), (3, F.conv3d)))
