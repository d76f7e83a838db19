"""Convolution (1-d and 2-d, strided, dilated, grouped, transposed) as differentiable primitives.

``convolution`` computes a cross-correlation with sliding windows (NumPy stride tricks) and one
``einsum`` per call; its transposed form scatters one kernel tap at a time. The two forms and
``convolution_backward_weight`` are each other's derivatives, so any order of derivative works.
"""
from __future__ import annotations

import itertools
import string

import numpy as np

from .registry import defop

_Tensor = None


def _is_tensor(x):
    global _Tensor
    if _Tensor is None:
        from .._tensor import Tensor
        _Tensor = Tensor
    return isinstance(x, _Tensor)


def _sliding(xp, x, kernel, stride, dilation):
    """Windows of ``x`` (N, C, *spatial): (N, C, *out, *kernel)."""
    nd = len(kernel)
    eff = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    win = np.lib.stride_tricks.sliding_window_view(x, eff, axis=tuple(range(2, 2 + nd)))
    key = (slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride) + \
        tuple(slice(None, None, d) for d in dilation)
    return win[key]


def _pad_raw(xp, x, pads):
    if not any(p for pair in pads for p in pair):
        return x
    return np.pad(x, ((0, 0), (0, 0)) + tuple(pads))


def _letters(nd):
    return string.ascii_lowercase[10:10 + nd], string.ascii_lowercase[20:20 + nd]


def _forward_raw(xp, x, w, stride, pads, dilation, groups):
    """Cross-correlation of x (N, C, *s) with w (O, C/g, *k): (N, O, *out)."""
    nd = x.ndim - 2
    kernel = w.shape[2:]
    win = _sliding(xp, _pad_raw(xp, x, pads), kernel, stride, dilation)
    n, c = x.shape[:2]
    o = w.shape[0]
    out_sp = win.shape[2:2 + nd]
    win = win.reshape((n, groups, c // groups) + win.shape[2:])
    wg = w.reshape((groups, o // groups) + w.shape[1:])
    sp, kk = _letters(nd)
    out = np.einsum(f"ngc{sp}{kk},goc{kk}->ngo{sp}", win, wg, optimize=True)
    return out.reshape((n, o) + out_sp)


def _transposed_raw(xp, g, w, stride, pads, dilation, groups, out_sp):
    """The adjoint of ``_forward_raw`` in x: g (N, O, *o) -> (N, C, *out_sp)."""
    nd = g.ndim - 2
    kernel = w.shape[2:]
    n, o = g.shape[:2]
    cg = w.shape[1]
    full = tuple(s + a + b for s, (a, b) in zip(out_sp, pads))
    dx = np.zeros((n, groups, cg) + full, dtype=np.result_type(g, w))
    gg = g.reshape((n, groups, o // groups) + g.shape[2:])
    wg = w.reshape((groups, o // groups) + w.shape[1:])
    sp, _ = _letters(nd)
    osz = g.shape[2:]
    for taps in itertools.product(*(range(k) for k in kernel)):
        key = (slice(None),) * 3 + tuple(
            slice(t * d, t * d + s * (m - 1) + 1, s)
            for t, d, s, m in zip(taps, dilation, stride, osz))
        wt = wg[(Ellipsis,) + taps]
        dx[key] += np.einsum(f"ngo{sp},goc->ngc{sp}", gg, wt, optimize=True)
    crop = (slice(None),) * 3 + tuple(slice(a, a + s) for s, (a, _) in zip(out_sp, pads))
    return dx[crop].reshape((n, groups * cg) + tuple(out_sp))


def _weight_grad_raw(xp, x, g, stride, pads, dilation, groups, kernel):
    nd = x.ndim - 2
    win = _sliding(xp, _pad_raw(xp, x, pads), kernel, stride, dilation)
    n, c = x.shape[:2]
    o = g.shape[1]
    win = win.reshape((n, groups, c // groups) + win.shape[2:])
    gg = g.reshape((n, groups, o // groups) + g.shape[2:])
    sp, kk = _letters(nd)
    dw = np.einsum(f"ngc{sp}{kk},ngo{sp}->goc{kk}", win, gg, optimize=True)
    return dw.reshape((o, c // groups) + tuple(kernel))


@defop("convolution", n_in=3, promote=True)
def _convolution(xp, input, weight, bias, stride, pads, dilation, transposed, out_sp, groups):
    if transposed:
        out = _transposed_raw(xp, input, weight, stride, pads, dilation, groups, out_sp)
    else:
        out = _forward_raw(xp, input, weight, stride, pads, dilation, groups)
    if bias is not None:
        out = out + bias.reshape((1, -1) + (1,) * (out.ndim - 2))
    return out


@defop("convolution_backward", n_in=2)
def _conv_weight(xp, input, grad, stride, pads, dilation, groups, kernel):
    return _weight_grad_raw(xp, input, grad, stride, pads, dilation, groups, kernel)


def _call(op, xp, *args):
    if _is_tensor(args[0]) or _is_tensor(args[1]):
        return op(*args)
    return op.forward(xp, *args)


def _conv_input_rule(xp, g, ans, input, weight, bias, stride, pads, dilation, transposed,
                     out_sp, groups):
    if transposed:
        return _call(_convolution, xp, g, weight, None, stride, pads, dilation, False, None,
                     groups)
    return _call(_convolution, xp, g, weight, None, stride, pads, dilation, True,
                 tuple(input.shape[2:]), groups)


def _conv_weight_rule(xp, g, ans, input, weight, bias, stride, pads, dilation, transposed,
                      out_sp, groups):
    kernel = tuple(weight.shape[2:])
    if transposed:
        return _call(_conv_weight, xp, g, input, stride, pads, dilation, groups, kernel)
    return _call(_conv_weight, xp, input, g, stride, pads, dilation, groups, kernel)


def _conv_bias_rule(xp, g, ans, input, weight, bias, stride, pads, dilation, transposed,
                    out_sp, groups):
    return xp.sum(g, axis=(0,) + tuple(range(2, g.ndim)))


_convolution.defvjp(_conv_input_rule, _conv_weight_rule, _conv_bias_rule)


def _cw_input_rule(xp, g, ans, input, grad, stride, pads, dilation, groups, kernel):
    return _call(_convolution, xp, grad, g, None, stride, pads, dilation, True,
                 tuple(input.shape[2:]), groups)


def _cw_grad_rule(xp, g, ans, input, grad, stride, pads, dilation, groups, kernel):
    return _call(_convolution, xp, input, g, None, stride, pads, dilation, False, None, groups)


_conv_weight.defvjp(_cw_input_rule, _cw_grad_rule)


__all__ = []
METHODS = {}
INPLACE = ()
