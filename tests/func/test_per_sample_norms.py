"""Batching rules of group norm and eval-mode batch norm with a weight or bias per sample
(``vmap(grad)``'s parameters): the norm on the folded batch, the affine map applied after.
Each against PyTorch's ``torch.func.vmap`` and ember's own loop over the samples: values and
gradients, float32 and float64, every in_dims combination; and per-sample gradients."""
import itertools

import numpy as np
import pytest

import ember
from ember.ops import batching

try:
    import torch
except ImportError:
    torch = None

B, N, C = 3, 2, 4


def group_norm(L, x, w, b):
    return L.nn.functional.group_norm(x, 2, w, b, eps=1e-5)


def batch_norm_eval(L, x, w, b):
    mean = L.linspace(-0.5, 0.5, C, dtype=x.dtype)
    var = L.linspace(0.5, 2.0, C, dtype=x.dtype)
    return L.nn.functional.batch_norm(x, mean, var, w, b, training=False)


NORMS = {"group_norm": group_norm, "batch_norm_eval": batch_norm_eval}
# every combination of mapped (0, or 1 for the input) and unmapped arguments, one mapped at least
IN_DIMS = [d for d in itertools.product((0, 1, None), (0, None), (0, None))
           if d != (None, None, None)]


def _data(dtype):
    rng = np.random.default_rng(0)
    return [rng.normal(size=(B, N, C, 5)).astype(dtype),
            rng.uniform(0.5, 1.5, (B, C)).astype(dtype), rng.normal(size=(B, C)).astype(dtype)]


def _args(lib, arrays, in_dims):
    out = []
    for a, d in zip(arrays, in_dims):
        a = a[0] if d is None else np.moveaxis(a, 0, d).copy()
        out.append(lib.tensor(a, requires_grad=True))
    return out


def _grads(lib, out, args):
    weights = lib.tensor(np.linspace(-1, 2, out.numel()).reshape(tuple(out.shape)),
                         dtype=out.dtype)
    return [g.numpy() for g in lib.autograd.grad((out * weights).sum(), args)]


def _tol(dtype):
    return {"rtol": 2e-5, "atol": 2e-5} if dtype == np.float32 else {"rtol": 1e-11,
                                                                      "atol": 1e-12}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("in_dims", IN_DIMS, ids=str)
@pytest.mark.parametrize("name", sorted(NORMS))
def test_vmap_equals_the_loop_and_pytorch(name, in_dims, dtype):
    fn = NORMS[name]
    arrays = _data(dtype)
    args = _args(ember, arrays, in_dims)
    before = dict(batching.fallbacks)
    out = ember.func.vmap(lambda *a: fn(ember, *a), in_dims=in_dims)(*args)
    assert dict(batching.fallbacks) == before  # a batching rule, not the per-sample loop
    got = [out.detach().numpy()] + _grads(ember, out, args)
    loop_args = _args(ember, arrays, in_dims)
    loop = ember.stack([fn(ember, *[a if d is None else a.select(d, i)
                                    for a, d in zip(loop_args, in_dims)]) for i in range(B)])
    for g, w in zip(got, [loop.detach().numpy()] + _grads(ember, loop, loop_args)):
        np.testing.assert_allclose(g, w, **_tol(dtype))
    if torch is not None:
        t_args = _args(torch, arrays, in_dims)
        t_out = torch.func.vmap(lambda *a: fn(torch, *a), in_dims=in_dims)(*t_args)
        for g, w in zip(got, [t_out.detach().numpy()] + _grads(torch, t_out, t_args)):
            np.testing.assert_allclose(g, w, **_tol(dtype))


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
@pytest.mark.parametrize("out_dims", [1, -1])
def test_out_dims(out_dims):
    arrays = _data(np.float64)
    results = []
    for lib in (ember, torch):
        args = _args(lib, arrays, (0, 0, None))
        out = lib.func.vmap(lambda *a: group_norm(lib, *a), in_dims=(0, 0, None),
                            out_dims=out_dims)(*args)
        results.append([out.detach().numpy()] + _grads(lib, out, args))
    for e, t in zip(*results):
        np.testing.assert_allclose(e, t, rtol=1e-11, atol=1e-12)


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
@pytest.mark.parametrize("layer", ["group", "batch_eval"])
def test_per_sample_gradients(layer):
    """``vmap(grad)`` of a small conv net with a norm layer, against PyTorch's."""
    rng = np.random.default_rng(1)
    x0, y0 = rng.normal(size=(5, 3, 6, 6)), rng.integers(0, 4, 5)
    results = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        norm = lib.nn.GroupNorm(2, 4) if layer == "group" else lib.nn.BatchNorm2d(4).eval()
        model = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), norm, lib.nn.ReLU(),
                                  lib.nn.Flatten(), lib.nn.Linear(64, 4)).double()
        with lib.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(lib.tensor(np.random.default_rng(i).normal(size=tuple(p.shape))))
            if layer != "group":
                norm.running_mean.copy_(lib.tensor(np.linspace(-1, 1, 4)))
                norm.running_var.copy_(lib.tensor(np.linspace(0.5, 2, 4)))
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = dict(model.named_buffers())

        def loss(p, x, y, lib=lib, model=model, buffers=buffers):
            out = lib.func.functional_call(model, (p, buffers), (x.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, y.unsqueeze(0))
        g = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(
            params, lib.tensor(x0), lib.tensor(y0))
        results.append({k: v.numpy() for k, v in g.items()})
    for k in results[1]:
        np.testing.assert_allclose(results[0][k], results[1][k], rtol=1e-10, atol=1e-12)
