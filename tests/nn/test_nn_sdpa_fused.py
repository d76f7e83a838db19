"""``scaled_dot_product_attention`` where PyTorch's CPU runs its fused kernel (4-d inputs of one
head dim, no mask, no dropout) and ember its one op (``ops/nn/attention.py``): values, gradients
and grad_fn against PyTorch, finite differences (first and second order), layouts, which inputs
require grad, repeated backwards, forward mode, vmap, the input domain (saturated softmax, inf,
nan, rows with every score -inf) and the cases that stay on the math composite."""
import numpy as np
import pytest

import ember
from ember.func import jvp, vmap

from ..opspec import Spec, op_tests

FUSED = "ScaledDotProductFlashAttentionForCpuBackward0"
QKV = ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5))  # E = Ev: the fused kernel's inputs
LONG_Q = ((2, 3, 7, 5), (2, 3, 6, 5), (2, 3, 6, 5))  # more queries than keys


def sdpa(lib, *args, **kw):
    return lib.nn.functional.scaled_dot_product_attention(*args, **kw)


SPECS = [
    Spec("sdpa_fused", sdpa, [QKV, LONG_Q], tol=5),
    Spec("sdpa_fused_causal", lambda L, q, k, v: sdpa(L, q, k, v, is_causal=True),
         [QKV, LONG_Q, ((1, 2, 6, 3), (1, 2, 6, 3), (1, 2, 6, 3))], tol=5),
    Spec("sdpa_fused_scale", lambda L, q, k, v: sdpa(L, q, k, v, scale=0.3), [QKV]),
    Spec("sdpa_fused_negative_scale", lambda L, q, k, v: sdpa(L, q, k, v, scale=-1.7), [QKV],
         tol=10),
]

test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)
test_gradgradcheck = pytest.mark.slow(test_gradgradcheck)


def _rand(shape, seed, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def _run(lib, arrays, dtype, grads=(True, True, True), out_grad_seed=9, **kw):
    """Output, grad_fn name and the inputs' gradients (None where not required)."""
    q, k, v = (lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=r)
               for a, r in zip(arrays, grads))
    out = sdpa(lib, q, k, v, **kw)
    name = type(out.grad_fn).__name__
    if out.requires_grad:
        out.backward(lib.tensor(_rand(tuple(out.shape), out_grad_seed),
                                dtype=getattr(lib, dtype)))
    return out.detach().numpy(), name, [None if t.grad is None else t.grad.numpy()
                                        for t in (q, k, v)]


def _tol(dtype):
    return dict(rtol=2e-4, atol=2e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)


def _same(e, t, dtype):
    assert e[1] == t[1]
    np.testing.assert_allclose(e[0], t[0], **_tol(dtype))
    for a, b in zip(e[2], t[2]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, **_tol(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("causal", [False, True])
def test_nanogpt_heads_layouts_and_gradients_match_pytorch(torch, dtype, causal):
    """Heads split from one fused qkv projection (nanoGPT): the output is laid out like the
    query ((B, L, H, E) in memory, so ``transpose(1, 2)`` is contiguous), and the projection's
    gradient comes back as PyTorch's."""
    B, T, C, H = 3, 16, 32, 4
    qkv0 = _rand((B, T, 3 * C), 1)
    res = []
    for lib in (ember, torch):
        qkv = lib.tensor(qkv0, dtype=getattr(lib, dtype), requires_grad=True)
        q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in qkv.split(C, dim=2))
        y = sdpa(lib, q, k, v, is_causal=causal)
        merged = y.transpose(1, 2)
        assert merged.is_contiguous()
        merged.reshape(B, T, C).backward(lib.tensor(_rand((B, T, C), 2),
                                                    dtype=getattr(lib, dtype)))
        res.append((type(y.grad_fn).__name__, tuple(y.stride()), y.detach().numpy(),
                    qkv.grad.numpy()))
    (en, es, ey, eg), (tn, ts, ty, tg) = res
    assert en == tn == FUSED and es == ts
    np.testing.assert_allclose(ey, ty, **_tol(dtype))
    np.testing.assert_allclose(eg, tg, **_tol(dtype))


@pytest.mark.parametrize("grads", [(True, False, False), (False, True, False),
                                   (False, False, True), (True, True, False),
                                   (False, True, True), (True, False, True)])
def test_any_subset_of_inputs_requiring_grad(torch, grads):
    arrays = [_rand(s, i) for i, s in enumerate(QKV)]
    for causal in (False, True):
        _same(_run(ember, arrays, "float64", grads, is_causal=causal),
              _run(torch, arrays, "float64", grads, is_causal=causal), "float64")


def test_backward_twice_with_retained_graph_accumulates(torch):
    """The query and key rules share their scores' gradient per output gradient: a second
    backward (another output gradient) computes its own."""
    arrays = [_rand(s, i) for i, s in enumerate(QKV)]
    res = []
    for lib in (ember, torch):
        q, k, v = (lib.tensor(a, requires_grad=True) for a in arrays)
        out = sdpa(lib, q, k, v, is_causal=True)
        for seed in (3, 4):
            out.backward(lib.tensor(_rand(tuple(out.shape), seed)), retain_graph=True)
        res.append([t.grad.numpy() for t in (q, k, v)])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, **_tol("float64"))


@pytest.mark.parametrize("scale", [40.0, 1e-6])
def test_saturated_and_flat_softmax(torch, scale):
    """Scores far apart (the softmax picks one key; exp underflows elsewhere) and all alike."""
    arrays = [_rand(s, i, scale if i < 2 else 1.0) for i, s in enumerate(QKV)]
    for dtype in ("float32", "float64"):
        for causal in (False, True):
            _same(_run(ember, arrays, dtype, is_causal=causal),
                  _run(torch, arrays, dtype, is_causal=causal), dtype)


def test_inf_and_nan_inputs_and_rows_with_every_score_minus_inf(torch):
    """A nan key poisons the rows that see it; under the causal mask the rows that do not see
    it are untouched (PyTorch's kernel never computes masked scores); a row whose every score is
    -inf gives zeros, as in PyTorch."""
    q, k, v = (_rand(s, i) for i, s in enumerate(((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4))))
    q[0, 0, 1] = [0.0, 0.0, np.inf, 0.0]
    k[0, 0, :, 2] = [-1.0, -2.0, 3.0, 4.0, 5.0]  # query 1 of head 0: -inf on keys 0 and 1
    k[0, 1, 3, 0] = np.nan
    for causal in (False, True):
        e, t = (sdpa(lib, *(lib.tensor(a) for a in (q, k, v)), is_causal=causal).numpy()
                for lib in (ember, torch))
        np.testing.assert_array_equal(np.isnan(e), np.isnan(t))
        np.testing.assert_allclose(e[~np.isnan(e)], t[~np.isnan(t)], rtol=1e-12, atol=1e-14)
    assert (e[0, 0, 1] == 0).all()


def test_causal_negative_scale_is_the_math_backends(torch):
    """PyTorch 2.13's fused kernel gives nan for a causal mask with a negative scale; ember gives
    what PyTorch's math backend (and the definition) gives."""
    arrays = [_rand(s, i) for i, s in enumerate(LONG_Q)]
    ours = _run(ember, arrays, "float64", is_causal=True, scale=-0.3)
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        theirs = _run(torch, arrays, "float64", is_causal=True, scale=-0.3)
    assert ours[1] == FUSED and not np.isnan(ours[0]).any()
    np.testing.assert_allclose(ours[0], theirs[0], **_tol("float64"))
    for a, b in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(a, b, **_tol("float64"))


def _math_only(lib):
    return lib.nn.attention.sdpa_kernel(lib.nn.attention.SDPBackend.MATH)


@pytest.mark.parametrize("case", ["math_only", "flash_off", "strided_head_dim", "3d",
                                  "broadcast_batch", "dropout_free_mask"])
def test_math_composite_where_pytorch_runs_it_or_ember_has_no_fused_op(torch, case):
    arrays = [_rand(s, i) for i, s in enumerate(QKV)]
    res = []
    for lib in (ember, torch):
        q, k, v = (lib.tensor(a, requires_grad=True) for a in arrays)
        kw = {}
        if case == "strided_head_dim":
            q = lib.tensor(_rand((2, 3, 5, 4), 7), requires_grad=True).transpose(-1, -2)
        elif case == "3d":
            q, k, v = q[0], k[0], v[0]
        elif case == "broadcast_batch":
            k, v = k[:1], v[:1]
        elif case == "dropout_free_mask":  # PyTorch fuses masks too; ember keeps the composite
            kw["attn_mask"] = lib.ones(4, 6, dtype=lib.bool).tril()
        if case == "math_only":
            with _math_only(lib):
                out = sdpa(lib, q, k, v)
        elif case == "flash_off":
            lib.backends.cuda.enable_flash_sdp(False)
            try:
                out = sdpa(lib, q, k, v)
            finally:
                lib.backends.cuda.enable_flash_sdp(True)
        else:
            out = sdpa(lib, q, k, v, **kw)
        res.append((type(out.grad_fn).__name__, out.detach().numpy()))
    assert res[0][0] != FUSED
    if case != "dropout_free_mask":
        assert res[0][0] == res[1][0]
    np.testing.assert_allclose(res[0][1], res[1][1], **_tol("float64"))


@pytest.mark.parametrize("in_dims", [(0, 0, 0), (0, None, None), (None, 0, 0)])
def test_vmap_equals_the_loop_over_samples(in_dims):
    samples = [[ember.tensor(_rand(s, 10 * b + i)) for i, s in enumerate(QKV)] for b in range(3)]
    args = [ember.stack([s[j] for s in samples]) if d == 0 else samples[0][j]
            for j, d in enumerate(in_dims)]
    for a in args:
        a.requires_grad_()
    f = vmap(lambda q, k, v: sdpa(ember, q, k, v, is_causal=True), in_dims=in_dims)
    got = f(*args)
    per = ember.stack([sdpa(ember, *[a[b] if d == 0 else a for a, d in zip(args, in_dims)],
                            is_causal=True) for b in range(3)])
    np.testing.assert_allclose(got.detach().numpy(), per.detach().numpy(), rtol=1e-12,
                               atol=1e-14)
    g = ember.tensor(_rand(tuple(got.shape), 5))
    for a, b in zip(ember.autograd.grad(got, args, g), ember.autograd.grad(per, args, g)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


def test_forward_mode_equals_finite_differences():
    """PyTorch's fused kernel has no forward mode; ember's op has one (its VJP transposed)."""
    q, k, v = (ember.tensor(_rand(s, i)) for i, s in enumerate(QKV))
    tq, tk, tv = (ember.tensor(_rand(s, 20 + i)) for i, s in enumerate(QKV))

    def f(q, k, v):
        return sdpa(ember, q, k, v, is_causal=True)

    out, tangent = jvp(f, (q, k, v), (tq, tk, tv))
    assert type(f(q.requires_grad_(), k, v).grad_fn).__name__ == FUSED
    h = 1e-6
    with ember.no_grad():
        plus = f(q + h * tq, k + h * tk, v + h * tv).numpy()
        minus = f(q - h * tq, k - h * tk, v - h * tv).numpy()
    np.testing.assert_allclose(tangent.numpy(), (plus - minus) / (2 * h), rtol=1e-6, atol=1e-8)


def test_causal_bounds_kept_are_few():
    """Sampling with a growing context calls attention at every length: the cached causal
    bounds stay a handful (one per length would be ~1.4 GB for a context of 1024)."""
    from ember.ops.nn import attention

    for n in range(1, 40):
        q = ember.randn(1, 2, n, 4)
        ember.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert len(attention._CAUSAL) <= attention._CAUSAL_KEPT
