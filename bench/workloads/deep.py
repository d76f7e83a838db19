"""``deep``: a 100-layer chain ``y = tanh(w_i * y)`` on 1M float32 elements, forward + backward.

Each layer has a scalar weight ``w_i`` (0-dim, requires grad); the loss is ``y.mean()``.
Measured: milliseconds per step, and the memory the step holds, traced by ``tracemalloc``:
what the forward leaves allocated, and the peak during the backward. The chain must save each
layer's ``tanh`` output (its own derivative ``1 - y^2`` and the next layer's ``d/dw_i``), so
the saved tensors need ``layers * n * 4`` bytes; a backward that frees each saved tensor once
used needs little beyond that.
"""
from __future__ import annotations

import numpy as np

from bench.harness import Case, Contender, Target

FULL = {"layers": 100, "n": 2**20}
QUICK = {"layers": 10, "n": 2**12}


def autograd_contender(lib, x0, w0):
    x = lib.tensor(x0, requires_grad=True)
    ws = [lib.tensor(w, requires_grad=True) for w in w0]

    def forward():
        x.grad = None
        for w in ws:
            w.grad = None
        y = x
        for w in ws:
            y = lib.tanh(y * w)
        return y.mean()

    def backward(loss):
        loss.backward()

    def step():
        backward(forward())

    def evaluate():
        loss = forward()
        backward(loss)
        return {"loss": loss.item(), "x.grad": x.grad.numpy(),
                "w.grad": np.array([w.grad.item() for w in ws])}

    return Contender(step, evaluate, forward, backward)


def numpy_contender(x, ws):
    def forward():
        ys = [x]
        for w in ws:
            y = ys[-1] * w
            np.tanh(y, out=y)
            ys.append(y)
        return ys, ys[-1].mean()

    def backward(state):
        """Pop each saved output and reuse its buffer for ``1 - y^2``: nothing else is kept."""
        ys, _ = state
        grad = np.full(x.size, 1 / x.size, np.float32)
        grad_w = np.empty(len(ws), np.float32)
        for i in reversed(range(len(ws))):
            y = ys.pop()
            np.multiply(y, y, out=y)
            np.subtract(1, y, out=y)
            grad *= y
            del y
            grad_w[i] = np.dot(grad, ys[-1])
            grad *= ws[i]
        return grad, grad_w

    def step():
        backward(forward())

    def evaluate():
        state = forward()
        grad, grad_w = backward(state)
        return {"loss": state[1], "x.grad": grad, "w.grad": grad_w}

    return Contender(step, evaluate, forward, backward)


def cases(libs, quick):
    size = QUICK if quick else FULL
    layers, n = size["layers"], size["n"]
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n, dtype=np.float32)
    ws = rng.uniform(0.9, 1.1, layers).astype(np.float32)
    contenders = {name: (lambda lib=lib: autograd_contender(lib, x, ws))
                  for name, lib in libs.items()}
    contenders["numpy"] = lambda: numpy_contender(x, ws)
    label = f"{n // 2**20}M" if n >= 2**20 else f"{n // 2**10}K"
    return [Case("deep", f"{layers} layers, {label}", "ms/step", contenders,
                 saved_bytes=layers * n * 4, memory_target=Target("saved", 1.1))]
