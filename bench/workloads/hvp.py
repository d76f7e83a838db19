"""``hvp``: Hessian-vector product of the MLP's loss (batch 128) by double backward.

ember and PyTorch: ``g = grad(loss, params, create_graph=True)``, then
``grad(sum(g_i * v_i), params)``. The NumPy floor is forward-over-reverse by hand: every value
of the forward and backward passes carries its directional derivative along ``v``, and the
tangents of the parameter gradients are the product ``H v``. Milliseconds per product.
"""
from __future__ import annotations

import numpy as np

from bench.harness import Case, Contender, Target
from bench.workloads.common import build_mlp, cross_entropy, mlp_data, mlp_grad_names
from bench.workloads.mlp import QUICK_SIZES, SIZES

FULL_BATCH, QUICK_BATCH = 128, 16


def autograd_contender(lib, params, x0, y0, v0):
    model = build_mlp(lib, params)
    weights = list(model.parameters())
    v = [lib.tensor(a) for a in v0]
    x, y = lib.tensor(x0), lib.tensor(y0)
    cross_entropy_ = lib.nn.functional.cross_entropy

    def step():
        loss = cross_entropy_(model(x), y)
        grads = lib.autograd.grad(loss, weights, create_graph=True)
        dot = sum((g * vi).sum() for g, vi in zip(grads, v))
        return loss, grads, lib.autograd.grad(dot, weights)

    def evaluate():
        loss, grads, hv = step()
        return named(loss.item(), [g.detach().numpy() for g in grads], [h.numpy() for h in hv])

    return Contender(step, evaluate)


def named(loss, grads, hv):
    names = mlp_grad_names(len(grads) // 2)
    return {"loss": loss, **dict(zip(names, grads)),
            **{"Hv." + name: h for name, h in zip(names, hv)}}


def numpy_hvp(params, tangents, x, y):
    """Loss, gradients and ``H v`` of the MLP's loss; ``d*`` names a value's tangent.

    ReLU's second derivative is zero, so its mask passes tangents through unchanged.
    """
    acts, dacts = [x], [None]  # the input is constant: no tangent
    for i, ((w, b), (dw, db)) in enumerate(zip(params, tangents)):
        a, da = acts[-1], dacts[-1]
        z = a @ w.T
        z += b
        dz = a @ dw.T
        dz += db
        if da is not None:
            dz += da @ w.T
        if i < len(params) - 1:
            mask = z > 0
            z *= mask
            dz *= mask
        acts.append(z)
        dacts.append(dz)
    loss, grad, probs = cross_entropy(acts[-1], y, keep_probs=True)
    # The tangent of (softmax - onehot) / N is softmax's Jacobian applied to dlogits, / N.
    dlogits = dacts[-1]
    dgrad = dlogits - (probs * dlogits).sum(axis=1, keepdims=True)
    dgrad *= probs
    dgrad /= len(y)
    grads, hv = [], []
    for i in reversed(range(len(params))):
        a, da = acts[i], dacts[i]
        grads += [grad.sum(axis=0), grad.T @ a]
        hw = dgrad.T @ a
        if da is not None:
            hw += grad.T @ da
        hv += [dgrad.sum(axis=0), hw]
        if i > 0:
            w, dw = params[i][0], tangents[i][0]
            mask = a > 0
            dgrad = dgrad @ w
            dgrad += grad @ dw
            dgrad *= mask
            grad = grad @ w
            grad *= mask
    return loss, grads[::-1], hv[::-1]


def numpy_contender(params, v, x, y):
    tangents = list(zip(v[::2], v[1::2]))
    return Contender(lambda: numpy_hvp(params, tangents, x, y),
                     lambda: named(*numpy_hvp(params, tangents, x, y)))


def cases(libs, quick):
    sizes, batch = (QUICK_SIZES, QUICK_BATCH) if quick else (SIZES, FULL_BATCH)
    params, x, y = mlp_data(1, sizes, batch)
    rng = np.random.default_rng(2)
    v = [rng.standard_normal(a.shape, dtype=np.float32) for pair in params for a in pair]
    contenders = {name: (lambda lib=lib: autograd_contender(lib, params, x, y, v))
                  for name, lib in libs.items()}
    contenders["numpy"] = lambda: numpy_contender(params, v, x, y)
    return [Case("hvp", f"batch {batch}", "ms/step", contenders, Target("numpy", 1.5))]
