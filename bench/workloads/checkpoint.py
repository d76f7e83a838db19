"""``checkpoint``: activation checkpointing trades recomputation for memory.

A 16-layer ``Linear(256, 256) -> tanh`` network on a batch of 2048 (so that activations, not
weight gradients, are most of the memory), ``y.mean()``, forward and backward, run through
``checkpoint_sequential(model, 4, x, use_reentrant=False)`` by ember and
PyTorch. The NumPy floor is the plain forward and backward, keeping every activation, as a
network without checkpointing must. Reported: milliseconds per step, and the memory kept after
the forward and at the peak of the backward (traced for ember and NumPy), against what a plain
backward saves: checkpointed, ember keeps only the segment boundaries and one segment's
recomputed activations at a time.
"""
from __future__ import annotations

import numpy as np

from bench.harness import Case, Contender, Target

FULL = {"layers": 16, "width": 256, "batch": 2048, "segments": 4}
QUICK = {"layers": 4, "width": 32, "batch": 8, "segments": 2}


def _params(size):
    rng = np.random.default_rng(0)
    w = size["width"]
    bound = 1 / np.sqrt(w)
    return [(rng.uniform(-bound, bound, (w, w)).astype(np.float32),
             rng.uniform(-bound, bound, w).astype(np.float32)) for _ in range(size["layers"])]


def autograd_contender(lib, params, x0, segments):
    layers = []
    for weight, bias in params:
        linear = lib.nn.Linear(*weight.shape[::-1])
        with lib.no_grad():
            linear.weight.copy_(lib.tensor(weight))
            linear.bias.copy_(lib.tensor(bias))
        layers += [linear, lib.nn.Tanh()]
    model = lib.nn.Sequential(*layers)
    x = lib.tensor(x0, requires_grad=True)
    checkpoint_sequential = (lib.utils.checkpoint.checkpoint_sequential if lib.__name__ == "ember"
                             else __import__("torch.utils.checkpoint").utils.checkpoint
                             .checkpoint_sequential)

    def forward():
        x.grad = None
        model.zero_grad()
        return checkpoint_sequential(model, segments, x, use_reentrant=False).mean()

    def backward(loss):
        loss.backward()

    def step():
        backward(forward())

    def evaluate():
        loss = forward()
        backward(loss)
        first, last = model[0], model[-2]
        return {"loss": loss.item(), "x.grad": x.grad.numpy(),
                "W1.grad": first.weight.grad.numpy(), "b_last.grad": last.bias.grad.numpy()}

    return Contender(step, evaluate, forward, backward)


def numpy_contender(params, x):
    def forward():
        acts = [x]
        for weight, bias in params:
            z = acts[-1] @ weight.T
            z += bias
            np.tanh(z, out=z)
            acts.append(z)
        return acts, acts[-1].mean()

    def backward(state):
        acts, _ = state
        grad = np.full(acts[-1].shape, 1 / acts[-1].size, np.float32)
        grads = []
        for i in reversed(range(len(params))):
            y = acts.pop()
            np.multiply(y, y, out=y)
            np.subtract(1, y, out=y)
            grad *= y
            del y
            grads.append((np.dot(grad.T, acts[-1]), grad.sum(axis=0)))
            grad = grad @ params[i][0]
        return grad, grads[::-1]

    def step():
        backward(forward())

    def evaluate():
        state = forward()
        loss = state[1]
        grad_x, grads = backward(state)
        return {"loss": loss, "x.grad": grad_x, "W1.grad": grads[0][0],
                "b_last.grad": grads[-1][1]}

    return Contender(step, evaluate, forward, backward)


def cases(libs, quick):
    size = QUICK if quick else FULL
    params = _params(size)
    x = np.random.default_rng(1).standard_normal((size["batch"], size["width"]),
                                                 dtype=np.float32)
    contenders = {name: (lambda lib=lib: autograd_contender(lib, params, x, size["segments"]))
                  for name, lib in libs.items()}
    contenders["numpy"] = lambda: numpy_contender(params, x)
    activation = size["batch"] * size["width"] * 4
    return [Case("checkpoint", f"{size['layers']} layers in {size['segments']} segments",
                 "ms/step", contenders,
                 # A plain backward keeps each layer's tanh output (the next layer's input).
                 saved_bytes=size["layers"] * activation,
                 memory_target=Target("saved", 0.6))]
