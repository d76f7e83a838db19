"""grid_sample as one op (GridSampler2DBackward0 / GridSampler3DBackward0): its forward and
both raw gradient rules against PyTorch over every mode x padding x align_corners, 4-d and
5-d, float32 and float64, with points outside the image, exactly on pixel centres and on the
borders between pixels, non-finite coordinates; against finite differences in float64; and
against the composition of ember's ops that serves its second derivatives."""
import itertools
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.nn.functional import grid as grid_module

torch = pytest.importorskip("torch")

CASES = [(nd, mode, pad, ac) for nd in (2, 3) for mode in ("bilinear", "nearest", "bicubic")
         for pad in ("zeros", "border", "reflection") for ac in (False, True)
         if not (nd == 3 and mode == "bicubic")]


def _grid(nd, shape, seed):
    """Random points from well outside the image to well inside, and points exactly on pixel
    centres, on the borders between pixels and on the image's corners and edges (for both
    conventions of align_corners: k / (S - 1) and (2k + 1) / S - 1 steps)."""
    r = np.random.default_rng(seed)
    g = r.uniform(-1.6, 1.6, shape)
    flat = g.reshape(-1, nd)
    special = [-1.0, 1.0, 0.0, 0.5, -0.5, 0.25, -0.75, 1 / 3, -1 / 3, 0.2, 1.2, -1.25, 3.0]
    for i in range(min(len(flat), 40)):
        flat[i] = r.choice(special, nd)
    return g


def _run(lib, x, g, w, mode, pad, ac, dtype):
    xs = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
    gs = lib.tensor(g, dtype=getattr(lib, dtype), requires_grad=True)
    y = lib.nn.functional.grid_sample(xs, gs, mode=mode, padding_mode=pad, align_corners=ac)
    name = type(y.grad_fn).__name__
    (y * lib.tensor(w, dtype=y.dtype)).sum().backward()
    return [y.detach().numpy(), xs.grad.numpy(), gs.grad.numpy()], name


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("nd,mode,pad,ac", CASES)
def test_values_and_gradients_against_pytorch(nd, mode, pad, ac, dtype):
    r = np.random.default_rng(3)
    x = r.standard_normal((2, 3, 4, 5) if nd == 2 else (2, 2, 3, 4, 5))
    g = _grid(nd, (2, 5, 6, 2) if nd == 2 else (2, 3, 2, 4, 3), seed=nd)
    w = r.standard_normal(x.shape[:2] + g.shape[1:-1])
    e, e_name = _run(ember, x, g, w, mode, pad, ac, dtype)
    t, t_name = _run(torch, x, g, w, mode, pad, ac, dtype)
    assert e_name == t_name == f"GridSampler{nd}DBackward0"
    tol = 1e-10 if dtype == "float64" else 1e-4
    for a, b in zip(e, t):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("nd,mode,pad,ac", [c for c in CASES if c[0] == 2])
def test_non_finite_coordinates_against_pytorch(nd, mode, pad, ac):
    """NaN, infinite and huge coordinates as PyTorch's 2-d kernel reads them: NaN weights
    stay NaN, the clamp takes NaN to 0. (Its 3-d kernel reads them otherwise, NaN as 0 under
    zeros padding and clamped to the far end under border; ember keeps the 2-d reading.)"""
    r = np.random.default_rng(4)
    x = r.standard_normal((1, 2, 3, 4) if nd == 2 else (1, 2, 3, 4, 2))
    points = np.full((4, nd), 0.3)
    points[0, 0], points[1, 0], points[2, 0], points[3, -1] = np.nan, np.inf, -np.inf, 1e30
    g = points.reshape((1,) * nd + (4, nd))
    with np.errstate(invalid="ignore"):
        e = ember.nn.functional.grid_sample(ember.tensor(x), ember.tensor(g), mode=mode,
                                            padding_mode=pad, align_corners=ac).numpy()
    t = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(g), mode=mode,
                                        padding_mode=pad, align_corners=ac).numpy()
    np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode,pad,ac", list(itertools.product(
    ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"), (False, True))))
def test_shapes_against_pytorch(mode, pad, ac):
    """One channel, one point, an image of one pixel along a dim, and an empty grid."""
    r = np.random.default_rng(5)
    for xs, gs in [((1, 1, 5, 6), (1, 1, 1, 2)), ((3, 1, 1, 4), (3, 2, 3, 2)),
                   ((2, 4, 3, 1), (2, 2, 2, 2)), ((1, 2, 3, 4), (1, 0, 3, 2))]:
        x, g = r.standard_normal(xs), r.uniform(-1.2, 1.2, gs)
        w = r.standard_normal(xs[:2] + gs[1:-1])
        e, _ = _run(ember, x, g, w, mode, pad, ac, "float64")
        t, _ = _run(torch, x, g, w, mode, pad, ac, "float64")
        for a, b in zip(e, t):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def _f64(*arrays):
    return [ember.tensor(a, dtype=ember.float64, requires_grad=True) for a in arrays]


@pytest.mark.parametrize("nd,mode,pad,ac", [c for c in CASES if c[1] != "nearest"])
def test_finite_differences(nd, mode, pad, ac):
    """Both gradients by central differences in float64, at points away from the kinks
    (pixel centres, the image's bounds)."""
    r = np.random.default_rng(6)
    x = r.standard_normal((1, 2, 3, 4) if nd == 2 else (1, 2, 2, 3, 4))
    g = r.uniform(-1.3, 1.3, (1, 2, 3, nd) if nd == 2 else (1, 1, 2, 3, nd))
    assert gradcheck(_sampler(mode, pad, ac), _f64(x, g))


def _sampler(mode, pad, ac):
    """grid_sample with these options, as a function of input and grid."""
    def fn(a, b):
        return ember.nn.functional.grid_sample(a, b, mode=mode, padding_mode=pad,
                                               align_corners=ac)
    return fn


@pytest.mark.parametrize("nd,mode,pad,ac", [(2, "bilinear", "zeros", False),
                                            (2, "nearest", "border", True),
                                            (2, "bicubic", "reflection", False),
                                            (3, "bilinear", "reflection", True)])
def test_second_derivatives(nd, mode, pad, ac):
    """Gradients of gradients (through the composition the rules record under
    create_graph) by finite differences, and the first gradients recorded that way equal the
    op's raw rules."""
    r = np.random.default_rng(7)
    x = r.standard_normal((1, 2, 3, 4) if nd == 2 else (1, 1, 2, 3, 4))
    g = r.uniform(-0.9, 0.9, (1, 2, 2, nd) if nd == 2 else (1, 1, 2, 2, nd))
    fn = _sampler(mode, pad, ac)
    assert gradgradcheck(fn, _f64(x, g))
    a, b = _f64(x, g)
    out = fn(a, b)
    v = ember.tensor(r.standard_normal(tuple(out.shape)))
    recorded = ember.autograd.grad(out, (a, b), v, create_graph=True)
    plain = ember.autograd.grad(fn(a, b), (a, b), v)
    for p, q in zip(recorded, plain):
        np.testing.assert_allclose(p.detach().numpy(), q.numpy(), rtol=1e-12, atol=1e-12)


def test_the_op_equals_its_composition():
    """The fused op and ``_grid_sample_composite`` (what its gradients of gradients, forward
    mode and vmap go through) agree in value and first gradients, float32 too."""
    r = np.random.default_rng(8)
    for nd, mode, pad, ac in CASES:
        for dtype in (ember.float64, ember.float32):
            x = r.standard_normal((2, 2, 3, 4) if nd == 2 else (2, 2, 2, 3, 4))
            g = _grid(nd, (2, 3, 2, nd) if nd == 2 else (2, 2, 2, 2, nd), seed=9)
            tol = 1e-12 if dtype == ember.float64 else 1e-5
            res = []
            for fn in (ember.nn.functional.grid_sample, grid_module._grid_sample_composite):
                a, b = (ember.tensor(t, dtype=dtype, requires_grad=True) for t in (x, g))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out = fn(a, b, mode, pad, ac)
                out.backward(ember.ones_like(out))
                res.append([out.detach().numpy(), a.grad.numpy(), b.grad.numpy()])
            for p, q in zip(*res):
                np.testing.assert_allclose(p, q, rtol=tol, atol=tol)


def test_gradient_of_input_only_and_of_grid_only():
    r = np.random.default_rng(10)
    x, g = r.standard_normal((1, 2, 4, 5)), r.uniform(-1, 1, (1, 3, 3, 2))
    for need in ((True, False), (False, True)):
        got, want = [], []
        for lib, into in ((ember, got), (torch, want)):
            a = lib.tensor(x, requires_grad=need[0])
            b = lib.tensor(g, requires_grad=need[1])
            out = lib.nn.functional.grid_sample(a, b, mode="bicubic", align_corners=False)
            out.sum().backward()
            into.append((a if need[0] else b).grad.numpy())
        np.testing.assert_allclose(got[0], want[0], rtol=1e-10, atol=1e-10)


def test_forward_mode_tangents_need_no_grad():
    """Forward mode transposes the rules, which record the composition on a leaf of their
    own: the tangent still requires no gradient when nothing it comes from does (pdist's
    rule records its composition the same way)."""
    r = np.random.default_rng(11)
    x, tx = (ember.tensor(r.standard_normal((1, 2, 3, 4))) for _ in range(2))
    g, tg = (ember.tensor(r.uniform(-1, 1, (1, 2, 2, 2))) for _ in range(2))
    def fn(a, b):
        return ember.nn.functional.grid_sample(a, b, align_corners=False)
    _, tangent = ember.func.jvp(fn, (x, g), (tx, tg))
    assert not tangent.requires_grad
    h = 1e-6
    fd = (fn(x + h * tx, g + h * tg) - fn(x - h * tx, g - h * tg)) / (2 * h)
    np.testing.assert_allclose(tangent.numpy(), fd.numpy(), atol=1e-7)
    _, tangent = ember.func.jvp(ember.nn.functional.pdist, (x[0, 0],), (tx[0, 0],))
    assert not tangent.requires_grad
    # a primal the tangent depends on that requires grad keeps the tangent's graph
    gg = g.detach().requires_grad_()
    _, tangent = ember.func.jvp(lambda b: fn(x, b), (gg,), (tg,))
    assert tangent.requires_grad


def test_vmap_over_input_and_grid_equals_the_loop():
    r = np.random.default_rng(12)
    xs = ember.tensor(r.standard_normal((3, 1, 2, 3, 4)))
    gs = ember.tensor(r.uniform(-1.2, 1.2, (3, 1, 2, 2, 2)))
    def fn(a, b):
        return ember.nn.functional.grid_sample(a, b, mode="bicubic", padding_mode="border",
                                               align_corners=True)
    v = ember.func.vmap(fn)(xs, gs)
    ref = np.stack([fn(a, b).numpy() for a, b in zip(xs, gs)])
    np.testing.assert_allclose(v.numpy(), ref, rtol=1e-12, atol=1e-12)


def test_the_output_written_in_place_keeps_the_backward():
    """The node saves the taps (hidden outputs), not the output: writing into the output,
    as PyTorch allows, leaves both gradients as they were."""
    r = np.random.default_rng(13)
    x, g = r.standard_normal((1, 2, 3, 4)), r.uniform(-1, 1, (1, 2, 3, 2))
    grads = []
    for lib in (ember, torch):
        a, b = lib.tensor(x, requires_grad=True), lib.tensor(g, requires_grad=True)
        out = lib.nn.functional.grid_sample(a, b, align_corners=True)
        out.mul_(2)
        out.sum().backward()
        grads.append((a.grad.numpy(), b.grad.numpy()))
    for p, q in zip(*grads):
        np.testing.assert_allclose(p, q, rtol=1e-10, atol=1e-10)
