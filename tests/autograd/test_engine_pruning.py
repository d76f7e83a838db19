"""When gradients are captured (``autograd.grad``, ``backward(inputs=...)``) a node runs only
the rules of edges that lead to a requested input, as PyTorch's nodes compute only the
outputs their task needs: ``autograd.grad(loss, [w])`` of a convolution does not compute the
input's gradient (a whole transposed convolution). A node's post-hook then sees None for the
skipped edge, as in PyTorch; the gradients returned are unchanged."""
from __future__ import annotations

import numpy as np
import pytest

import ember


def _hooked_mul(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = lib.tensor([2.0, 0.5, -1.0], requires_grad=True)
    z = x * w
    seen = []
    z.grad_fn.register_hook(
        lambda gi, go: seen.append([None if g is None else g.tolist() for g in gi]))
    return x, w, z, seen


@pytest.mark.parametrize("how", ["grad_w", "grad_x", "grad_both", "backward_inputs_x"])
def test_skipped_edges_read_none_in_hooks_as_in_pytorch(torch, how):
    results = []
    for lib in (ember, torch):
        x, w, z, seen = _hooked_mul(lib)
        if how == "backward_inputs_x":
            z.sum().backward(inputs=[x])
            got = [x.grad.tolist(), w.grad]
        else:
            inputs = {"grad_w": [w], "grad_x": [x], "grad_both": [x, w]}[how]
            got = [g.tolist() for g in lib.autograd.grad(z.sum(), inputs)]
        results.append((seen, got))
    assert results[0] == results[1]


def test_only_the_needed_rule_runs(monkeypatch):
    """The input rule of conv2d does not run for ``autograd.grad(out, [weight])``."""
    x = ember.randn(2, 3, 8, 8, dtype=ember.float64, requires_grad=True)
    w = ember.randn(4, 3, 3, 3, dtype=ember.float64, requires_grad=True)
    out = ember.nn.functional.conv2d(x, w, padding=1)
    op = out.grad_fn._op
    calls = []
    rules = list(op.rules)
    wrapped = [lambda *a, _r=r, _i=i: calls.append(_i) or _r(*a) for i, r in enumerate(rules)]
    monkeypatch.setattr(op, "rules", wrapped)
    (gw,) = ember.autograd.grad(out.sum(), [w], retain_graph=True)
    assert calls == [1]
    calls.clear()
    gx, gw_both = ember.autograd.grad(out.sum(), [x, w])
    assert sorted(calls) == [0, 1]
    np.testing.assert_array_equal(gw.numpy(), gw_both.numpy())
