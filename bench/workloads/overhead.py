"""``overhead``: a 20-op elementwise chain on a 3-element float32 tensor, forward + backward.

With three elements the arithmetic costs nothing, so this measures what each library spends
per op: dispatch, recording the graph, the backward's bookkeeping. Reported in microseconds
per op: the time of the whole step (chain, ``sum()``, ``backward()``) divided by 20.
Two chains: ``mul/add`` (``y = y * w + x``, 10 times) and ``exp/tanh/sigmoid``
(``y = exp(sigmoid(tanh(y * w) + x))``, 4 times).
"""
from __future__ import annotations

import numpy as np

from bench.harness import Case, Contender, Target

N_OPS = 20
KINDS = ("mul/add", "exp/tanh/sigmoid")


def chain(lib, kind, x, w):
    """The 20 ops, written once for ember and PyTorch."""
    y = x
    if kind == "mul/add":
        for _ in range(10):
            y = y * w
            y = y + x
    else:
        for _ in range(4):
            y = lib.exp(lib.sigmoid(lib.tanh(y * w) + x))
    return y


def autograd_contender(lib, kind, x0, w0):
    x = lib.tensor(x0, requires_grad=True)
    w = lib.tensor(w0, requires_grad=True)

    def step():
        x.grad = w.grad = None
        loss = chain(lib, kind, x, w).sum()
        loss.backward()
        return loss

    def evaluate():
        loss = step()
        return {"loss": loss.item(), "x.grad": x.grad.numpy(), "w.grad": w.grad.numpy()}

    return Contender(step, evaluate)


def numpy_mul_add(x, w):
    """Forward, saving each multiplication's input, then the backward by hand."""
    inputs = []
    y = x
    for _ in range(10):
        inputs.append(y)
        y = y * w
        y += x
    loss = y.sum()
    g = np.ones_like(x)
    gx = np.zeros_like(x)
    gw = np.zeros_like(w)
    for y_in in reversed(inputs):
        gx += g           # y + x
        gw += g * y_in    # y * w, with respect to w
        g = g * w         # ... and to y
    gx += g               # the chain starts at x
    return loss, gx, gw


def numpy_transcendental(x, w):
    saved = []
    y = x
    for _ in range(4):
        t = np.tanh(y * w)
        s = np.exp(-(t + x))
        s += 1
        np.reciprocal(s, out=s)  # sigmoid(t + x)
        e = np.exp(s)
        saved.append((y, t, s, e))
        y = e
    loss = y.sum()
    g = np.ones_like(x)
    gx = np.zeros_like(x)
    gw = np.zeros_like(w)
    for y_in, t, s, e in reversed(saved):
        g = g * e                 # exp
        g *= s * (1 - s)          # sigmoid
        gx += g                   # + x
        g *= 1 - t * t            # tanh
        gw += g * y_in            # y * w
        g = g * w
    gx += g
    return loss, gx, gw


def numpy_contender(kind, x, w):
    fn = numpy_mul_add if kind == "mul/add" else numpy_transcendental

    def evaluate():
        loss, gx, gw = fn(x, w)
        return {"loss": loss, "x.grad": gx, "w.grad": gw}

    return Contender(lambda: fn(x, w), evaluate)


def cases(libs, quick):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(3, dtype=np.float32)
    w = rng.uniform(0.5, 0.9, 3).astype(np.float32)
    out = []
    for kind in KINDS:
        contenders = {name: (lambda lib=lib, kind=kind: autograd_contender(lib, kind, x, w))
                      for name, lib in libs.items()}
        contenders["numpy"] = lambda kind=kind: numpy_contender(kind, x, w)
        out.append(Case("overhead", kind, "us/op", contenders, Target("torch", 0.5),
                        per=N_OPS))
    return out
