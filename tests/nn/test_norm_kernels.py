"""The norms' kernels (``ember/ops/nn/normalization.py``) on the paths the small spec shapes
miss: rows longer than ``rows._BLAS_ROW`` (split into pieces, or not splittable), the
normalized input kept for the backward (retained graphs, an in-place op on the output), the
shared sums of batch norm's rules; against PyTorch in float32 and float64, with an offset
mean, and by finite differences (small shapes: the formulas are the same at every length).
"""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

from ..conftest import to_np

CALLS = {
    "layer": lambda F, t, w, b: F.layer_norm(t, tuple(t.shape[2:]), None, None),
    "layer_affine": lambda F, t, w, b: F.layer_norm(t, tuple(t.shape[1:]),
                                                    w.reshape(-1)[:1].expand(*t.shape[1:]),
                                                    None),
    "group": lambda F, t, w, b: F.group_norm(t, 2, w, b),
    "batch": lambda F, t, w, b: F.batch_norm(t, None, None, w, b, True),
    "instance": lambda F, t, w, b: F.instance_norm(t, weight=w, bias=b),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("rest", [(1031,), (40, 52), (3, 700)])  # prime, 2080, 2100
@pytest.mark.parametrize("kind", sorted(CALLS))
def test_long_rows_match_torch(torch, kind, rest, dtype):
    rng = np.random.default_rng(len(rest))
    x = rng.standard_normal((3, 4) + rest) * 3 + 20
    v = rng.standard_normal(x.shape)
    w, b = rng.standard_normal(4), rng.standard_normal(4)
    results = []
    for lib in (ember, torch):
        ts = [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True) for a in (x, w, b)]
        y = CALLS[kind](lib.nn.functional, *ts)
        (y * lib.tensor(v, dtype=y.dtype)).sum().backward()
        results.append([to_np(y)] + [to_np(t.grad) for t in ts if t.grad is not None])
    tol = 1e-4 if dtype == "float32" else 1e-10
    for a, c in zip(*results):
        np.testing.assert_allclose(a, c, rtol=tol, atol=tol * np.abs(c).max())


@pytest.mark.parametrize("kind", ["layer_affine", "group", "batch"])
def test_kept_normalized_input_survives(torch, kind):
    """A second backward of a retained graph, and an in-place op on the output, leave the
    normalized input the forward kept as it was."""
    rng = np.random.default_rng(5)
    x, w, b = rng.standard_normal((4, 4, 6)), rng.standard_normal(4), rng.standard_normal(4)
    v = rng.standard_normal(x.shape)
    grads = []
    for lib in (ember, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = CALLS[kind](lib.nn.functional, *ts)
        z = (y * lib.tensor(v)).sum()
        z.backward(retain_graph=True)
        z.backward()
        y2 = CALLS[kind](lib.nn.functional, *ts) * 1.0
        y3 = CALLS[kind](lib.nn.functional, *ts)
        y3.relu_()
        (y3 * lib.tensor(v)).sum().backward()
        grads.append([to_np(y2)] + [to_np(t.grad) for t in ts if t.grad is not None])
    for a, c in zip(*grads):
        np.testing.assert_allclose(a, c, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kind", sorted(CALLS))
def test_gradients_by_finite_differences(kind):
    rng = np.random.default_rng(6)
    ts = [ember.tensor(a, requires_grad=True) for a in
          (rng.standard_normal((2, 4, 6)) + 3, rng.standard_normal(4), rng.standard_normal(4))]
    f = lambda *a: CALLS[kind](ember.nn.functional, *a)  # noqa: E731
    assert gradcheck(f, ts)
    assert gradgradcheck(f, ts)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
@pytest.mark.parametrize("needs", ["all", "input", "params"])
def test_group_norm_folded_factors_match_torch(torch, dtype, affine, needs):
    """Group norm's forward as xc * (rstd * w) + b and its backward from the sums per
    (sample, channel) of g and g * xc (shared by the three rules, or each rule's own when
    only some inputs require grad), with and without weight and bias, an offset mean."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 6, 5, 7)) * 2 + 10
    w, b, v = rng.standard_normal(6), rng.standard_normal(6), rng.standard_normal(x.shape)
    results = []
    for lib in (ember, torch):
        t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=needs != "params")
        wt = lib.tensor(w, dtype=t.dtype, requires_grad=needs != "input") \
            if affine in ("weight", "both") else None
        bt = lib.tensor(b, dtype=t.dtype, requires_grad=needs != "input") \
            if affine in ("bias", "both") else None
        if lib is torch and affine == "bias":  # (PyTorch 2.13 fails on a bias without weight)
            wt = lib.ones(6, dtype=t.dtype)
        y = lib.nn.functional.group_norm(t, 3, wt, bt)
        if y.requires_grad:
            (y * lib.tensor(v, dtype=y.dtype)).sum().backward()
        results.append([to_np(y)] + [to_np(a.grad) for a in (t, wt, bt)
                                     if a is not None and a.grad is not None])
    tol = 1e-4 if dtype == "float32" else 1e-10
    assert len(results[0]) == len(results[1])
    for a, c in zip(*results):
        np.testing.assert_allclose(a, c, rtol=tol, atol=tol * np.abs(c).max())


@pytest.mark.parametrize("affine", [False, True])
def test_group_norm_double_backward(affine):
    rng = np.random.default_rng(8)
    ts = [ember.tensor(rng.standard_normal((2, 4, 3)) + 2, requires_grad=True)]
    if affine:
        ts += [ember.tensor(rng.standard_normal(4), requires_grad=True) for _ in range(2)]
    f = lambda *a: ember.nn.functional.group_norm(a[0], 2, *a[1:])  # noqa: E731
    assert gradcheck(f, ts)
    assert gradgradcheck(f, ts)
