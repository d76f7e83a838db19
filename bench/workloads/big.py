"""``big``: ``(tanh(x) * sigmoid(x) + x**2).mean()`` forward + backward on 4M float32 elements.

Large elementwise work: memory traffic and temporaries decide, not per-op overhead.
Milliseconds per step.
"""
from __future__ import annotations

import numpy as np

from bench.harness import Case, Contender, Target

FULL, QUICK = 4 * 2**20, 2**16


def autograd_contender(lib, x0):
    x = lib.tensor(x0, requires_grad=True)

    def step():
        x.grad = None
        loss = (lib.tanh(x) * lib.sigmoid(x) + x**2).mean()
        loss.backward()
        return loss

    def evaluate():
        loss = step()
        return {"loss": loss.item(), "x.grad": x.grad.numpy()}

    return Contender(step, evaluate)


def numpy_step(x):
    """The loss and ``d loss / dx = ((1 - t^2) s + t s (1 - s) + 2x) / n``, where ``t = tanh x``
    and ``s = sigmoid x``, reusing buffers in place."""
    t = np.tanh(x)
    s = np.exp(-x)
    s += 1
    np.reciprocal(s, out=s)
    y = t * s
    y += x * x
    loss = y.mean()
    # Backward, in the buffers of y and t.
    np.multiply(t, t, out=y)
    np.subtract(1, y, out=y)
    y *= s                    # (1 - t^2) s
    t *= s
    s -= 1
    t *= s                    # -t s (1 - s)
    y -= t
    y += x
    y += x
    y *= np.float32(1 / x.size)
    return loss, y


def numpy_contender(x):
    def evaluate():
        loss, grad = numpy_step(x)
        return {"loss": loss, "x.grad": grad}

    return Contender(lambda: numpy_step(x), evaluate)


def cases(libs, quick):
    n = QUICK if quick else FULL
    x = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    contenders = {name: (lambda lib=lib: autograd_contender(lib, x)) for name, lib in libs.items()}
    contenders["numpy"] = lambda: numpy_contender(x)
    label = f"{n // 2**20}M" if n >= 2**20 else f"{n // 2**10}K"
    return [Case("big", f"{label} elements", "ms/step", contenders, Target("numpy", 1.1))]
