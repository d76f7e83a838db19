"""``persample``: per-sample gradients, ``vmap(grad(loss))`` against a loop of backward passes.

A 64-128-10 ReLU MLP (the digits' sizes) in float32 and cross-entropy, the gradient of each
sample's loss with respect to every parameter, for a batch of 64: ``torch.func.vmap`` of
``torch.func.grad`` of a ``functional_call`` (ember and PyTorch, the same code), against the
hand-written NumPy floor (one batched forward, the per-sample weight gradients as batched outer
products). The target compares ember's vmap with ember running the same gradients the way
code without vmap must: a Python loop of one ``backward()`` per sample (timed in the same
interleaved rounds, and checked to agree).
"""
from __future__ import annotations

import numpy as np

from bench.harness import Case, Contender, Target

FULL = {"sizes": (64, 128, 10), "batch": 64}
QUICK = {"sizes": (8, 16, 4), "batch": 4}


def _data(size):
    rng = np.random.default_rng(0)
    n_in, n_hidden, n_out = size["sizes"]
    params = {}
    for name, (rows, cols) in (("0", (n_hidden, n_in)), ("2", (n_out, n_hidden))):
        bound = 1 / np.sqrt(cols)
        params[f"{name}.weight"] = rng.uniform(-bound, bound, (rows, cols)).astype(np.float32)
        params[f"{name}.bias"] = rng.uniform(-bound, bound, rows).astype(np.float32)
    x = rng.standard_normal((size["batch"], n_in), dtype=np.float32)
    y = rng.integers(0, n_out, size["batch"])
    return params, x, y


def _model(lib, params, size):
    n_in, n_hidden, n_out = size["sizes"]
    model = lib.nn.Sequential(lib.nn.Linear(n_in, n_hidden), lib.nn.ReLU(),
                              lib.nn.Linear(n_hidden, n_out))
    with lib.no_grad():
        for name, p in model.named_parameters():
            p.copy_(lib.tensor(params[name]))
    return model


def vmap_contender(lib, params, x0, y0, size):
    model = _model(lib, params, size)
    theta = {k: v.detach() for k, v in model.named_parameters()}
    x, y = lib.tensor(x0), lib.tensor(y0)

    def loss(p, xi, yi):
        out = lib.func.functional_call(model, p, (xi.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, yi.unsqueeze(0))

    per_sample = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))

    def step():
        return per_sample(theta, x, y)

    def evaluate():
        return {f"{k}.grads": v.numpy() for k, v in step().items()}

    return Contender(step, evaluate)


def loop_contender(lib, params, x0, y0, size):
    model = _model(lib, params, size)
    x, y = lib.tensor(x0), lib.tensor(y0)
    named = list(model.named_parameters())
    cross_entropy = lib.nn.functional.cross_entropy

    def step():
        grads = {name: [] for name, _ in named}
        for i in range(len(y0)):
            for _, p in named:
                p.grad = None
            cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
            for name, p in named:
                grads[name].append(p.grad)
        return {name: lib.stack(g) for name, g in grads.items()}

    def evaluate():
        return {f"{k}.grads": v.numpy() for k, v in step().items()}

    return Contender(step, evaluate)


def numpy_contender(params, x, y):
    w1, b1, w2, b2 = (params[k] for k in ("0.weight", "0.bias", "2.weight", "2.bias"))
    onehot = np.eye(w2.shape[0], dtype=np.float32)[y]

    def step():
        h = x @ w1.T
        h += b1
        np.maximum(h, 0, out=h)
        z = h @ w2.T
        z += b2
        z -= z.max(axis=1, keepdims=True)
        np.exp(z, out=z)
        z /= z.sum(axis=1, keepdims=True)
        z -= onehot  # each sample's d loss / d logits
        dh = z @ w2
        dh *= h > 0
        return {"0.weight.grads": np.einsum("bi,bj->bij", dh, x), "0.bias.grads": dh,
                "2.weight.grads": np.einsum("bi,bj->bij", z, h), "2.bias.grads": z}

    return Contender(step, step)


def cases(libs, quick):
    size = QUICK if quick else FULL
    params, x, y = _data(size)
    contenders = {name: (lambda lib=lib: vmap_contender(lib, params, x, y, size))
                  for name, lib in libs.items()}
    contenders["numpy"] = lambda: numpy_contender(params, x, y)
    ember = libs["ember"]
    return [Case("persample", f"MLP {'-'.join(map(str, size['sizes']))}, batch {size['batch']}",
                 "ms/step", contenders, target=Target("ember loop", 0.2),
                 references={"ember loop": lambda: loop_contender(ember, params, x, y, size)})]
