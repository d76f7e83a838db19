"""``mlp``: one SGD training step of a 784-512-512-10 ReLU MLP in float32.

Forward, mean cross-entropy, backward, ``p -= lr * grad``, at batch 1 (per-op overhead
dominates), 64 and 1024 (the matrix products dominate). Milliseconds per step.
"""
from __future__ import annotations

from bench.harness import Case, Contender, Target
from bench.workloads.common import (
    build_mlp,
    cross_entropy,
    mlp_backward,
    mlp_data,
    mlp_forward,
    mlp_grad_names,
    training_contender,
)

SIZES = (784, 512, 512, 10)
BATCHES = (1, 64, 1024)
TARGETS = (1.3, 1.15, 1.05)  # ember / NumPy floor, per batch
QUICK_SIZES, QUICK_BATCHES = (64, 32, 32, 10), (1, 8, 32)
LR = 0.01


def autograd_contender(lib, params, x0, y0):
    model = build_mlp(lib, params)
    return training_contender(lib, model, x0, y0, mlp_grad_names(len(params)), LR)


def numpy_contender(params, x, y):
    params = [(w.copy(), b.copy()) for w, b in params]
    flat = [a for pair in params for a in pair]

    def loss_and_grads():
        acts = mlp_forward(params, x)
        loss, grad = cross_entropy(acts[-1], y)
        return loss, mlp_backward(params, acts, grad)

    def step():
        for param, grad in zip(flat, loss_and_grads()[1]):
            grad *= LR
            param -= grad

    def evaluate():
        loss, grads = loss_and_grads()
        return {"loss": loss, **dict(zip(mlp_grad_names(len(params)), grads))}

    return Contender(step, evaluate)


def cases(libs, quick):
    sizes, batches = (QUICK_SIZES, QUICK_BATCHES) if quick else (SIZES, BATCHES)
    out = []
    for batch, ratio in zip(batches, TARGETS):
        params, x, y = mlp_data(batch, sizes, batch)
        contenders = {name: (lambda lib=lib, params=params, x=x, y=y:
                             autograd_contender(lib, params, x, y))
                      for name, lib in libs.items()}
        contenders["numpy"] = lambda params=params, x=x, y=y: numpy_contender(params, x, y)
        out.append(Case("mlp", f"batch {batch}", "ms/step", contenders,
                        Target("numpy", ratio)))
    return out
