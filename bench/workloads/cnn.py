"""``cnn``: one SGD training step of a small convolutional network, batch 32, float32.

conv3x3(3->16, padding 1) - ReLU - maxpool 2x2 - conv3x3(16->32) - ReLU - maxpool 2x2 -
linear(32*8*8 -> 10), mean cross-entropy, on 32x32 RGB inputs. Milliseconds per step.

The NumPy floor works channels-last (NHWC), the layout that suits im2col: a convolution is one
``sliding_window_view`` copy and one matrix product, its input gradient nine shifted adds;
2x2 max-pooling is a reshape. Weights are rearranged to that layout once, at setup.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from bench.harness import Case, Contender, Target
from bench.workloads.common import (
    cross_entropy,
    layer_init,
    load_params,
    training_contender,
)

CHANNELS = (3, 16, 32)
N_CLASSES = 10
FULL = {"batch": 32, "side": 32}
QUICK = {"batch": 4, "side": 8}
NAMES = ("conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc.weight", "fc.bias")
LR = 0.01
TARGET = 1.3  # ember / the NumPy floor


def cnn_data(seed, batch, side):
    rng = np.random.default_rng(seed)
    c0, c1, c2 = CHANNELS
    params = [*layer_init(rng, (c1, c0, 3, 3)), *layer_init(rng, (c2, c1, 3, 3)),
              *layer_init(rng, (N_CLASSES, c2 * (side // 4) ** 2))]
    x = rng.standard_normal((batch, c0, side, side), dtype=np.float32)
    y = rng.integers(0, N_CLASSES, batch)
    return params, x, y


def autograd_contender(lib, params, x0, y0, compiled=False):
    """The step in ``lib`` (``compiled``: through ``lib.compile``)."""
    nn = lib.nn
    c0, c1, c2 = CHANNELS
    model = nn.Sequential(
        nn.Conv2d(c0, c1, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(c1, c2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(params[4].shape[1], N_CLASSES))
    load_params(lib, model, params)
    return training_contender(lib, model, x0, y0, NAMES, LR, compiled)


# --------------------------------------------------------------------------- the NumPy floor


def conv3x3(x, wmat, bias):
    """3x3 convolution with padding 1 of NHWC ``x`` by ``wmat`` ``(out, 3*3*in)``.

    Returns the NHWC output and the im2col matrix (saved for the backward).
    """
    n, h, w, c = x.shape
    padded = np.zeros((n, h + 2, w + 2, c), x.dtype)
    padded[:, 1:-1, 1:-1] = x
    windows = sliding_window_view(padded, (3, 3), axis=(1, 2))  # (n, h, w, c, 3, 3), a view
    cols = windows.transpose(0, 1, 2, 4, 5, 3).reshape(n * h * w, 9 * c)  # the one copy
    out = cols @ wmat.T
    out += bias
    return out.reshape(n, h, w, -1), cols


def conv3x3_backward(grad, cols, wmat, input_grad=True):
    """Gradients ``(input, weight, bias)`` of ``conv3x3``; the input's by col2im."""
    n, h, w, o = grad.shape
    grad = grad.reshape(-1, o)
    dw, db = grad.T @ cols, grad.sum(axis=0)
    if not input_grad:
        return None, dw, db
    c = wmat.shape[1] // 9
    dcols = (grad @ wmat).reshape(n, h, w, 3, 3, c)
    dpadded = np.zeros((n, h + 2, w + 2, c), grad.dtype)
    for i in range(3):
        for j in range(3):
            dpadded[:, i:i + h, j:j + w] += dcols[:, :, :, i, j]
    return dpadded[:, 1:-1, 1:-1], dw, db


def maxpool2(a):
    """2x2 max-pooling, stride 2, of NHWC ``a``; also returns the windows (a view of ``a``)."""
    n, h, w, c = a.shape
    windows = a.reshape(n, h // 2, 2, w // 2, 2, c)
    return windows.max(axis=(2, 4)), windows


def maxpool2_backward(grad, windows, out):
    """Route ``grad`` to each window's maximum. Ties (only exact zeros here, after ReLU) all
    receive it, but the ReLU's backward that follows zeroes those."""
    routed = (windows == out[:, :, None, :, None]) * grad[:, :, None, :, None]
    n, h2, _, w2, _, c = routed.shape
    return routed.reshape(n, 2 * h2, 2 * w2, c)


def numpy_contender(params, x, y):
    w1, b1, w2, b2, wfc, bfc = (a.copy() for a in params)
    n, side = len(x), x.shape[2] // 4
    # Channels-last: weights as (out, kh*kw*in), the linear layer's columns in (h, w, c) order.
    wmat1 = w1.transpose(0, 2, 3, 1).reshape(len(w1), -1)
    wmat2 = w2.transpose(0, 2, 3, 1).reshape(len(w2), -1)
    wfc = wfc.reshape(N_CLASSES, -1, side, side).transpose(0, 2, 3, 1).reshape(N_CLASSES, -1)
    flat_params = [wmat1, b1, wmat2, b2, wfc, bfc]
    x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))

    def loss_and_grads():
        a1, cols1 = conv3x3(x, wmat1, b1)
        np.maximum(a1, 0, out=a1)
        p1, win1 = maxpool2(a1)
        a2, cols2 = conv3x3(p1, wmat2, b2)
        np.maximum(a2, 0, out=a2)
        p2, win2 = maxpool2(a2)
        feats = p2.reshape(n, -1)
        logits = feats @ wfc.T
        logits += bfc
        loss, grad = cross_entropy(logits, y)
        dwfc, dbfc = grad.T @ feats, grad.sum(axis=0)
        grad = maxpool2_backward((grad @ wfc).reshape(p2.shape), win2, p2)
        grad *= a2 > 0
        grad, dw2, db2 = conv3x3_backward(grad, cols2, wmat2)
        grad = maxpool2_backward(grad, win1, p1)
        grad *= a1 > 0
        _, dw1, db1 = conv3x3_backward(grad, cols1, wmat1, input_grad=False)
        return loss, [dw1, db1, dw2, db2, dwfc, dbfc]

    def step():
        for param, grad in zip(flat_params, loss_and_grads()[1]):
            grad *= LR
            param -= grad

    def evaluate():
        loss, (dw1, db1, dw2, db2, dwfc, dbfc) = loss_and_grads()
        # Back to PyTorch's layouts to compare.
        dw1 = dw1.reshape(len(dw1), 3, 3, -1).transpose(0, 3, 1, 2)
        dw2 = dw2.reshape(len(dw2), 3, 3, -1).transpose(0, 3, 1, 2)
        dwfc = dwfc.reshape(N_CLASSES, side, side, -1).transpose(0, 3, 1, 2).reshape(
            N_CLASSES, -1)
        return {"loss": loss, **dict(zip(NAMES, [dw1, db1, dw2, db2, dwfc, dbfc]))}

    return Contender(step, evaluate)


def cases(libs, quick):
    size = QUICK if quick else FULL
    params, x, y = cnn_data(0, size["batch"], size["side"])
    contenders = {name: (lambda lib=lib: autograd_contender(lib, params, x, y))
                  for name, lib in libs.items()}
    contenders["numpy"] = lambda: numpy_contender(params, x, y)
    variant = f"batch {size['batch']}, {size['side']}x{size['side']}"
    return [Case("cnn", variant, "ms/step", contenders, Target("numpy", TARGET))]
