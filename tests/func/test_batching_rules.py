"""Ops that ran vmap's per-sample loop and now have a batching rule: padding, upsampling,
pixel/channel shuffle (their kernels map the trailing dims, or fold the batch into N), glu,
logcumsumexp (a dim moved past the batch), complex, polar, gcd, lcm (pointwise). Each under
vmap equals ember's own loop over the samples and PyTorch's ``torch.func.vmap`` (values and
gradients, every in_dims combination, out_dims), runs no per-sample loop, and ``jacrev``
through it (the backward ops batched over the cotangents) equals PyTorch's."""
import itertools

import numpy as np
import pytest

import ember
from ember.ops import batching

try:
    import torch
except ImportError:
    torch = None

B = 3


def F(L):
    return L.nn.functional


# name -> (function of the samples, sample shapes, dtype, differentiable)
RULES = {
    "pad_constant": (lambda L, x: F(L).pad(x, (1, 2, 0, 1), value=0.5), [(2, 3, 4)]),
    "pad_crop": (lambda L, x: F(L).pad(x, (-1, 2)), [(2, 5)]),
    "pad_reflect": (lambda L, x: F(L).pad(x, (2, 1), mode="reflect"), [(2, 5)]),
    "pad_reflect2d": (lambda L, x: F(L).pad(x, (1, 1, 2, 0), mode="reflect"), [(1, 2, 4, 4)]),
    "pad_replicate": (lambda L, x: F(L).pad(x, (1, 2, 1, 0), mode="replicate"),
                      [(2, 3, 4)]),
    "pad_circular": (lambda L, x: F(L).pad(x, (1, 2), mode="circular"), [(2, 3, 4)]),
    "upsample_nearest": (lambda L, x: F(L).interpolate(x, scale_factor=2), [(1, 2, 3, 4)]),
    "upsample_bilinear": (lambda L, x: F(L).interpolate(x, size=(5, 3), mode="bilinear"),
                          [(2, 2, 3, 4)]),
    "upsample_linear_ac": (lambda L, x: F(L).interpolate(x, size=7, mode="linear",
                                                         align_corners=True), [(2, 3, 4)]),
    "upsample_bicubic": (lambda L, x: F(L).interpolate(x, scale_factor=1.5, mode="bicubic"),
                         [(1, 1, 4, 4)]),
    "upsample_trilinear": (lambda L, x: F(L).interpolate(x, size=(3, 2, 4), mode="trilinear"),
                           [(1, 1, 2, 3, 2)]),
    "pixel_shuffle": (lambda L, x: F(L).pixel_shuffle(x, 2), [(8, 2, 3)]),
    "pixel_unshuffle": (lambda L, x: F(L).pixel_unshuffle(x, 2), [(1, 2, 4, 6)]),
    "channel_shuffle": (lambda L, x: L.nn.ChannelShuffle(2)(x), [(2, 4, 3)]),
    "glu": (lambda L, x: F(L).glu(x, -1), [(3, 4)]),
    "glu_dim0": (lambda L, x: F(L).glu(x, 0), [(4, 3)]),
    "logcumsumexp": (lambda L, x: L.logcumsumexp(x, 1), [(2, 4)]),
    "complex": (lambda L, a, b: L.view_as_real(L.complex(a, b)), [(2, 3), (2, 3)]),
    "complex_broadcast": (lambda L, a, b: L.view_as_real(L.complex(a, b)), [(2, 3), (3,)]),
    "polar": (lambda L, a, b: L.view_as_real(L.polar(a.abs(), b)), [(2, 3), (2, 3)]),
}
INTEGER = {
    "gcd": (lambda L, a, b: L.gcd(a, b), [(2, 3), (2, 3)]),
    "lcm": (lambda L, a, b: L.lcm(a, b), [(3,), (2, 3)]),
    "gcd_inplace": (lambda L, a, b: a.clone().gcd_(b), [(2, 3), (3,)]),
}


def _arrays(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "int64":
        return [rng.integers(-20, 30, (B,) + s) for s in shapes]
    return [rng.uniform(-1.5, 1.5, (B,) + s).astype(dtype) for s in shapes]


def _args(lib, arrays, in_dims, grad):
    out = []
    for a, d in zip(arrays, in_dims):
        t = lib.tensor(a[0] if d is None else np.moveaxis(a, 0, d).copy())
        out.append(t.requires_grad_() if grad else t)
    return out


def _with_grads(lib, out, args, grad):
    if not grad:
        return [out.numpy()]
    weights = lib.tensor(np.linspace(-1, 2, out.numel()).reshape(tuple(out.shape)),
                         dtype=out.dtype)
    return [out.detach().numpy()] + [g.numpy() for g in lib.autograd.grad(
        (out * weights).sum(), args)]


def _cases():
    for table, dtypes in ((RULES, ("float32", "float64")), (INTEGER, ("int64",))):
        for name, (_fn, shapes) in sorted(table.items()):
            dims = [d for d in itertools.product(*[(0, 1, None)] * len(shapes))
                    if d != (None,) * len(shapes)  # (an in-place write needs a batched self)
                    and not (name.endswith("_inplace") and d[0] is None)]
            for in_dims, dtype in itertools.product(dims, dtypes):
                yield pytest.param(name, in_dims, dtype, id=f"{name}-{in_dims}-{dtype}")


def _tol(dtype):
    return {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-12,
                                                                     "atol": 1e-12}


@pytest.mark.parametrize("name,in_dims,dtype", list(_cases()))
def test_vmap_equals_the_loop_and_pytorch(name, in_dims, dtype):
    fn, shapes = {**RULES, **INTEGER}[name]
    grad = dtype != "int64"
    arrays = _arrays(shapes, dtype)
    args = _args(ember, arrays, in_dims, grad)
    before = dict(batching.fallbacks)
    out = ember.func.vmap(lambda *a: fn(ember, *a), in_dims=in_dims)(*args)
    assert dict(batching.fallbacks) == before, dict(batching.fallbacks)
    got = _with_grads(ember, out, args, grad)
    loop_args = _args(ember, arrays, in_dims, grad)
    loop = ember.stack([fn(ember, *[a if d is None else a.select(d, i)
                                    for a, d in zip(loop_args, in_dims)]) for i in range(B)])
    for g, w in zip(got, _with_grads(ember, loop, loop_args, grad)):
        np.testing.assert_allclose(g, w, **_tol(dtype))
    if torch is not None:
        t_args = _args(torch, arrays, in_dims, grad)
        t_out = torch.func.vmap(lambda *a: fn(torch, *a), in_dims=in_dims)(*t_args)
        for g, w in zip(got, _with_grads(torch, t_out, t_args, grad)):
            np.testing.assert_allclose(g, w, **_tol(dtype))


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
@pytest.mark.parametrize("name", ["pad_constant", "pad_reflect2d", "upsample_bilinear",
                                  "pixel_shuffle", "glu", "complex"])
def test_out_dims(name):
    fn, shapes = RULES[name]
    arrays = _arrays(shapes, "float64")
    results = []
    for lib in (ember, torch):
        args = _args(lib, arrays, (0,) * len(shapes), True)
        out = lib.func.vmap(lambda *a: fn(lib, *a), out_dims=-1)(*args)
        results.append(_with_grads(lib, out, args, True))
    for e, t in zip(*results):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
@pytest.mark.parametrize("name", ["pad_constant", "pad_reflect", "pad_replicate",
                                  "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
                                  "pixel_unshuffle", "glu", "logcumsumexp"])
def test_jacrev_batches_the_backward(name):
    """``jacrev`` pushes every cotangent through the backward at once: the backward ops
    (``*_backward``, or the forward ops as the derivative's) run on batched cotangents."""
    fn, shapes = RULES[name]
    x0 = _arrays(shapes, "float64")[0][0]
    results = []
    for lib in (ember, torch):
        x = lib.tensor(x0)
        results.append(lib.func.jacrev(lambda t, lib=lib: fn(lib, t).sin())(x).numpy())
        results.append(lib.func.jacfwd(lambda t, lib=lib: fn(lib, t).sin())(x).numpy())
    np.testing.assert_allclose(results[0], results[2], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(results[1], results[3], rtol=1e-12, atol=1e-12)
