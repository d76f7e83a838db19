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
