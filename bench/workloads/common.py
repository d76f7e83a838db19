"""Pieces several workloads share: data, the MLP in both its forms, cross-entropy on NumPy."""
from __future__ import annotations

import numpy as np

from bench.harness import Contender


def grads_of(tensors):
    """The ``.grad`` of each ember/PyTorch tensor as a NumPy array."""
    return [t.grad.detach().numpy() for t in tensors]


def layer_init(rng, shape):
    """PyTorch's default initialisation of a ``Linear``/``Conv`` weight of ``shape`` and its
    bias: uniform in +-1/sqrt(fan_in), float32."""
    bound = 1 / np.sqrt(np.prod(shape[1:]))
    weight = rng.uniform(-bound, bound, shape).astype(np.float32)
    bias = rng.uniform(-bound, bound, shape[0]).astype(np.float32)
    return weight, bias


def mlp_data(seed, sizes, batch):
    """Weights (PyTorch's ``(out, in)`` layout), inputs and integer labels for an MLP."""
    rng = np.random.default_rng(seed)
    params = [layer_init(rng, (n_out, n_in)) for n_in, n_out in zip(sizes, sizes[1:])]
    x = rng.standard_normal((batch, sizes[0]), dtype=np.float32)
    y = rng.integers(0, sizes[-1], batch)
    return params, x, y


def load_params(lib, module, arrays):
    """Copy NumPy ``arrays`` into ``module``'s parameters, in ``parameters()`` order."""
    with lib.no_grad():
        for param, array in zip(module.parameters(), arrays, strict=True):
            param.copy_(lib.tensor(array))


def build_mlp(lib, params):
    """``Linear``/``ReLU`` layers as a ``Sequential`` of ``lib``, holding copies of ``params``."""
    layers = []
    for weight, _ in params:
        layers += [lib.nn.Linear(weight.shape[1], weight.shape[0]), lib.nn.ReLU()]
    model = lib.nn.Sequential(*layers[:-1])  # no ReLU after the last layer
    load_params(lib, model, [a for pair in params for a in pair])
    return model


def mlp_grad_names(n_layers):
    return [f"{kind}{i}" for i in range(1, n_layers + 1) for kind in ("W", "b")]


def cross_entropy(logits, y, keep_probs=False):
    """Mean cross-entropy of ``logits`` against labels ``y``, by logsumexp, and its gradient.

    Returns ``(loss, dlogits)``, ``dlogits = (softmax - onehot) / N`` built in the softmax's
    buffer; with ``keep_probs`` ``(loss, dlogits, softmax)`` (forward-over-reverse needs it).
    """
    n = len(y)
    rows = np.arange(n)
    shifted = logits - logits.max(axis=1, keepdims=True)
    probs = np.exp(shifted)
    total = probs.sum(axis=1, keepdims=True)
    loss = (np.log(total[:, 0]) - shifted[rows, y]).mean()
    probs /= total
    grad = probs.copy() if keep_probs else probs
    grad[rows, y] -= 1
    grad /= n
    return (loss, grad, probs) if keep_probs else (loss, grad)


def mlp_forward(params, x):
    """Activations of a ReLU MLP: ``[x, relu(z1), ..., logits]`` (ReLU done in place)."""
    acts = [x]
    for i, (weight, bias) in enumerate(params):
        z = acts[-1] @ weight.T
        z += bias
        if i < len(params) - 1:
            np.maximum(z, 0, out=z)
        acts.append(z)
    return acts


def mlp_backward(params, acts, grad):
    """Gradients ``[dW1, db1, dW2, ...]`` from ``grad`` of the logits, by hand."""
    grads = []
    for i in reversed(range(len(params))):
        a = acts[i]
        # np.dot, not @: at batch 1 (an outer product) NumPy's matmul leaves BLAS, 5-10x slower.
        grads += [grad.sum(axis=0), np.dot(grad.T, a)]  # reversed below: (dW, db) per layer
        if i > 0:
            grad = grad @ params[i][0]
            grad *= a > 0  # ReLU: a is the layer's output, positive exactly where z was
    return grads[::-1]


def training_contender(lib, model, x0, y0, names, lr, compiled=False):
    """One SGD step (cross-entropy, backward, update) of ``model`` in ember or PyTorch;
    ``compiled``: the step and the check's forward and backward through ``lib.compile``."""
    opt = lib.optim.SGD(model.parameters(), lr=lr)
    x, y = lib.tensor(x0), lib.tensor(y0)
    cross_entropy_ = lib.nn.functional.cross_entropy

    def loss_and_grads():
        opt.zero_grad()
        loss = cross_entropy_(model(x), y)
        loss.backward()
        return loss

    def step():
        loss_and_grads()
        opt.step()

    if compiled:
        step, loss_and_grads = lib.compile(step), lib.compile(loss_and_grads)

    def evaluate():
        loss = loss_and_grads()
        return {"loss": loss.item(), **dict(zip(names, grads_of(model.parameters())))}

    return Contender(step, evaluate)
