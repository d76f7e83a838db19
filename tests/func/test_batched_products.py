"""The fast forms of batched matrix products: vmap's ``"matmul"`` rule with one operand the
same for every sample (the batch folded into one GEMM), and ``bmm`` of a stack that is one
matrix repeated (an expand, as ``vmap(grad)`` sees a parameter) or of inner dim 1 (outer
products). Each equals PyTorch's ``torch.func.vmap`` and ember's own loop over the samples,
values and gradients, float32 and float64, for in_dims/out_dims variants and nested levels.
"""
import numpy as np
import pytest

import ember
from ember.ops import batching

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")

# name -> (function of the samples, sample shapes); every product the rule folds
PRODUCTS = {
    "mm": (lambda L, a, b: L.mm(a, b), ((4, 3), (3, 5))),
    "mm_column": (lambda L, a, b: L.mm(a, b), ((4, 3), (3, 1))),
    "mv": (lambda L, a, b: L.mv(a, b), ((4, 3), (3,))),
    "dot": (lambda L, a, b: L.dot(a, b), ((3,), (3,))),
    "vdot": (lambda L, a, b: L.vdot(a, b), ((3,), (3,))),
    "matmul_vec_mat": (lambda L, a, b: a @ b, ((3,), (3, 5))),
    "matmul_mat_t": (lambda L, a, b: a @ b.t(), ((4, 3), (5, 3))),
    "bmm": (lambda L, a, b: L.bmm(a, b), ((2, 4, 3), (2, 3, 5))),
    "addmm": (lambda L, a, b: L.addmm(L.ones(4, 5, dtype=a.dtype), a, b, beta=0.5, alpha=2),
              ((4, 3), (3, 5))),
    "addmv": (lambda L, a, b: L.addmv(L.ones(4, dtype=a.dtype), a, b, alpha=-1),
              ((4, 3), (3,))),
    "linear": (lambda L, a, b: L.nn.functional.linear(a, b), ((2, 3), (5, 3))),
}
B = 4


def _data(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, (B,) + s).astype(dtype) for s in shapes]


def _run(lib, fn, arrays, in_dims, out_dims=0, requires_grad=True):
    """vmap of ``fn`` on ``arrays`` (the mapped ones batched at their in_dim, the others
    sample 0's), its result and the gradients of a weighted sum of it."""
    args = []
    for a, d in zip(arrays, in_dims):
        t = lib.tensor(a[0] if d is None else np.moveaxis(a, 0, d).copy())
        args.append(t.requires_grad_(requires_grad))
    out = lib.func.vmap(lambda *xs: fn(lib, *xs), in_dims=in_dims, out_dims=out_dims)(*args)
    weights = lib.tensor(np.linspace(-1, 2, out.numel()).reshape(tuple(out.shape)),
                         dtype=out.dtype)
    grads = lib.autograd.grad((out * weights).sum(), args)
    return out.detach().numpy(), [g.numpy() for g in grads]


def _loop(fn, arrays, in_dims, out_dims=0):
    """ember's own loop over the samples: each sample's result, stacked at ``out_dims``."""
    args = [ember.tensor(a[0] if d is None else np.moveaxis(a, 0, d).copy()).requires_grad_()
            for a, d in zip(arrays, in_dims)]
    outs = [fn(ember, *[a if d is None else a.select(d, i) for a, d in zip(args, in_dims)])
            for i in range(B)]
    out = ember.stack(outs, out_dims)
    weights = ember.tensor(np.linspace(-1, 2, out.numel()).reshape(tuple(out.shape)),
                           dtype=out.dtype)
    grads = ember.autograd.grad((out * weights).sum(), args)
    return out.detach().numpy(), [g.numpy() for g in grads]


def _tol(dtype):
    if dtype in (np.float32, "float32"):
        return {"rtol": 1e-5, "atol": 1e-6}
    return {"rtol": 1e-12, "atol": 1e-13}


IN_DIMS = [(0, None), (None, 0), (0, 0), (1, None), (None, 1), (-1, None)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("in_dims", IN_DIMS, ids=str)
@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_batched_product_equals_the_loop_and_pytorch(name, in_dims, dtype):
    fn, shapes = PRODUCTS[name]
    if any(d not in (None, 0) and len(s) < 1 for d, s in zip(in_dims, shapes)):
        pytest.skip("no such dim")
    arrays = _data(shapes, dtype)
    before = dict(batching.fallbacks)
    out, grads = _run(ember, fn, arrays, in_dims)
    assert dict(batching.fallbacks) == before  # a batching rule, not the per-sample loop
    want, want_grads = _loop(fn, arrays, in_dims)
    np.testing.assert_allclose(out, want, **_tol(dtype))
    for g, w in zip(grads, want_grads):
        np.testing.assert_allclose(g, w, **_tol(dtype))
    if torch is not None:
        t_out, t_grads = _run(torch, fn, arrays, in_dims)
        np.testing.assert_allclose(out, t_out, **_tol(dtype))
        for g, w in zip(grads, t_grads):
            np.testing.assert_allclose(g, w, **_tol(dtype))


@needs_torch
@pytest.mark.parametrize("out_dims", [1, -1])
@pytest.mark.parametrize("name", ["mm", "mv", "matmul_vec_mat"])
def test_out_dims(name, out_dims):
    fn, shapes = PRODUCTS[name]
    arrays = _data(shapes, np.float64)
    for in_dims in [(None, 0), (0, None)]:
        out, grads = _run(ember, fn, arrays, in_dims, out_dims)
        t_out, t_grads = _run(torch, fn, arrays, in_dims, out_dims)
        np.testing.assert_allclose(out, t_out, rtol=1e-12)
        for g, w in zip(grads, t_grads):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13)


@needs_torch
@pytest.mark.parametrize("name", ["mm", "mv", "dot", "matmul_vec_mat", "addmm", "bmm"])
def test_nested_levels(name):
    """Two levels, each operand mapped by one of them (in either order), or the inner level
    mapping both and the outer one only the first."""
    fn, shapes = PRODUCTS[name]
    rng = np.random.default_rng(1)
    a0, b0 = rng.uniform(-1, 1, (2,) + shapes[0]), rng.uniform(-1, 1, (3,) + shapes[1])
    c0 = rng.uniform(-1, 1, (2, 3) + shapes[0])
    results = []
    for lib in (ember, torch):
        a, b, c = (lib.tensor(v, requires_grad=True) for v in (a0, b0, c0))

        def f(x, y, lib=lib):
            return fn(lib, x, y)
        vmap_ = lib.func.vmap
        outs = [vmap_(vmap_(f, in_dims=(None, 0)), in_dims=(0, None))(a, b),
                vmap_(vmap_(f, in_dims=(0, None)), in_dims=(None, 0))(a, b),
                vmap_(vmap_(f), in_dims=(0, None))(c, b)]
        grads = lib.autograd.grad(sum((o ** 2).sum() for o in outs), (a, b, c))
        results.append([o.detach().numpy() for o in outs] + [g.numpy() for g in grads])
    for e, t in zip(*results):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-13)


@needs_torch
def test_per_sample_gradients_of_a_linear_layer():
    """``vmap(grad)`` of a linear layer: the weight is one matrix repeated (an expand) and its
    per-sample gradients outer products: bmm's fast forms, against PyTorch."""
    rng = np.random.default_rng(2)
    w0, b0 = rng.normal(size=(5, 7)), rng.normal(size=5)
    x0, y0 = rng.normal(size=(6, 7)), rng.integers(0, 5, 6)
    results = []
    for lib in (ember, torch):
        params = {"w": lib.tensor(w0), "b": lib.tensor(b0)}

        def loss(p, x, y, lib=lib):
            out = lib.nn.functional.linear(x.unsqueeze(0), p["w"], p["b"]).tanh()
            return lib.nn.functional.cross_entropy(out, y.unsqueeze(0))
        g = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(
            params, lib.tensor(x0), lib.tensor(y0))
        results.append([g["w"].numpy(), g["b"].numpy()])
    for e, t in zip(*results):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", ["shared_second", "outer", "shared_second_outer",
                                  "shared_first", "shared_both", "transposed_first", "plain"])
def test_bmm_of_an_expanded_stack_or_inner_dim_one(case, dtype):
    """``bmm`` where one stack is a matrix repeated by ``expand`` (stride 0: a leaf that
    requires grad, with a gradient per entry) or the inner dim is 1: values and gradients
    equal the same product of copies, and PyTorch's."""
    rng = np.random.default_rng(3)
    k = 1 if "outer" in case else 3
    first0, second0 = rng.normal(size=(4, 2, k)), rng.normal(size=(4, k, 5))
    weights = np.linspace(-1, 1, 40).reshape(4, 2, 5)
    libs = (ember,) if torch is None else (ember, torch)
    results = []
    for lib in libs:
        dt = getattr(lib, dtype)
        first, second = lib.tensor(first0, dtype=dt), lib.tensor(second0, dtype=dt)
        if case in ("shared_first", "shared_both"):
            first = first[:1].expand(4, 2, k)
        if case == "transposed_first":  # rows that do not fold without a copy
            first = first.detach().transpose(0, 1).contiguous().transpose(0, 1)
        if case not in ("plain", "shared_first"):
            second = second[:1].expand(4, k, 5)
        first, second = first.detach().requires_grad_(), second.detach().requires_grad_()
        out = lib.bmm(first, second)
        copies = lib.bmm(first.detach().clone(), second.detach().clone())
        np.testing.assert_allclose(out.detach().numpy(), copies.numpy(), **_tol(dtype))
        grads = lib.autograd.grad(out, (first, second), lib.tensor(weights, dtype=dt))
        results.append([out.detach().numpy()] + [g.numpy() for g in grads])
        values = first.detach().numpy(), second.detach().numpy()
    for e, t in zip(*results) if len(results) == 2 else ():
        np.testing.assert_allclose(e, t, **_tol(dtype))
    assert results[0][1].shape == (4, 2, k) and results[0][2].shape == (4, k, 5)
    for i in range(4):  # each entry's gradient is its own
        np.testing.assert_allclose(results[0][1][i], weights[i] @ values[1][i].T,
                                   **_tol(dtype))
        np.testing.assert_allclose(results[0][2][i], values[0][i].T @ weights[i],
                                   **_tol(dtype))


def test_bmm_expanded_second_derivatives_by_finite_differences():
    """double backward through the fast forms (recorded rules) against finite differences."""
    rng = np.random.default_rng(4)
    a = ember.tensor(rng.normal(size=(3, 2, 1)), requires_grad=True)
    base = ember.tensor(rng.normal(size=(1, 4)), requires_grad=True)
    c = ember.tensor(rng.normal(size=(3, 2, 4)), requires_grad=True)
    d = ember.tensor(rng.normal(size=(4, 3)), requires_grad=True)

    def f(a, base, c, d):
        outer = ember.bmm(a, base.unsqueeze(0).expand(3, 1, 4))  # inner dim 1
        shared = ember.bmm(c, d.unsqueeze(0).expand(3, 4, 3))  # a repeated second stack
        return (outer.sin() * 2).sum() + (shared.tanh() ** 2).sum()
    assert ember.autograd.gradcheck(f, (a, base, c, d))
    assert ember.autograd.gradgradcheck(f, (a, base, c, d))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mm_of_repeated_rows(dtype):
    """``mm`` whose first operand's rows are one row repeated (stride 0: jacfwd's primal per
    basis vector): computed once, the same values and gradients as with copies, and
    PyTorch's."""
    rng = np.random.default_rng(5)
    row, w0 = rng.normal(size=(1, 3)), rng.normal(size=(3, 4))
    weights = np.linspace(-1, 1, 24).reshape(6, 4)
    results = []
    for lib in (ember,) if torch is None else (ember, torch):
        dt = getattr(lib, dtype)
        a = lib.tensor(row, dtype=dt).expand(6, 3).detach().requires_grad_()
        w = lib.tensor(w0, dtype=dt, requires_grad=True)
        out = lib.mm(a, w)
        np.testing.assert_allclose(out.detach().numpy(), lib.mm(a.detach().clone(), w).detach()
                                   .numpy(), **_tol(dtype))
        grads = lib.autograd.grad(out, (a, w), lib.tensor(weights, dtype=dt))
        results.append([out.detach().numpy()] + [g.numpy() for g in grads])
    for e, t in zip(*results) if len(results) == 2 else ():
        np.testing.assert_allclose(e, t, **_tol(dtype))


@needs_torch
@pytest.mark.parametrize("name", ["mm", "mv", "bmm", "matmul_mat_t", "linear"])
def test_an_expanded_batch(name):
    """A mapped operand that is one sample expanded (stride 0 over the batch), against
    PyTorch: the rule's product of rows that do not fold without a copy."""
    fn, shapes = PRODUCTS[name]
    rng = np.random.default_rng(6)
    a0, b0 = rng.normal(size=shapes[0]), rng.normal(size=(B,) + shapes[1])
    results = []
    for lib in (ember, torch):
        a = lib.tensor(a0).expand((B,) + shapes[0]).detach().requires_grad_()
        b = lib.tensor(b0, requires_grad=True)
        for args in ((a, b), (a, b[0].expand((B,) + shapes[1]))):
            out = lib.func.vmap(lambda x, y, lib=lib: fn(lib, x, y))(*args)
            grads = lib.autograd.grad((out * out).sum(), (a, b), allow_unused=True)
            results.append([out.detach().numpy()] + [None if g is None else g.numpy()
                                                     for g in grads])
    half = len(results) // 2
    for got, want in zip(results[:half], results[half:]):
        for e, t in zip(got, want):
            assert (e is None) == (t is None)
            if e is not None:
                np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-13)
