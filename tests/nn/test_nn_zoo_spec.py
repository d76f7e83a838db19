"""The nn zoo of issue 20 in the spec table (``tests/opspec.py``): grid_sample, affine_grid,
pdist, fractional max pooling with fixed samples, conv_transpose3d, the margin / embedding /
triplet / poisson / gaussian losses and ctc_loss — gradcheck and gradgradcheck in float64,
values, dtypes, grad_fns and gradients against PyTorch; ``tests/spec_modules.py`` runs them
through forward mode and vmap too. The functions' other cases and errors are in
``test_nn_zoo_functional*.py`` and ``test_nn_losses_more.py``."""
from ..opspec import Spec, op_tests

F_ = lambda L: L.nn.functional  # noqa: E731

# ember composes these from its ops, where PyTorch runs one fused kernel with a node of its
# own (AffineGridGeneratorBackward0, ...): the rows compare values and gradients, not the
# node's name (grad_fn_name=False). grid_sample is one op, with PyTorch's node names.
COMPOSITE = dict(grad_fn_name=False)


def _signs(L, x, seed=0):
    """A +-1 target of ``x``'s shape and dtype that does not depend on ``x``'s values."""
    n = x.numel()
    return (L.arange(n, dtype=x.dtype).reshape(x.shape) * 7 % 3 > 0.5).to(x.dtype) * 2 - 1


def _positive(x):
    return x.abs() + 0.1


def _fmp2(L, x):
    samples = L.tensor([[[0.3, 0.8], [0.6, 0.1]]], dtype=x.dtype)  # (N, C, 2) fixed draws
    return F_(L).fractional_max_pool2d(x, 2, output_size=3, _random_samples=samples)


def _fmp3(L, x):
    samples = L.tensor([[[0.2, 0.7, 0.4]]], dtype=x.dtype)
    return F_(L).fractional_max_pool3d(x, (2, 1, 2), output_size=(2, 3, 2),
                                       _random_samples=samples)


def _ctc(L, x, **kw):
    """ctc_loss of log_softmax(x): PyTorch's gradient wrt log-probabilities assumes they are
    normalised; through log_softmax its gradient and ember's exact one agree."""
    return F_(L).ctc_loss(x.log_softmax(-1), L.tensor([[1, 2, 2], [3, 1, 0]]), L.tensor([6, 5]),
                          L.tensor([3, 2]), **kw)


SPECS = [
    Spec("grid_sample_bilinear", lambda L, x, g: F_(L).grid_sample(x, g, align_corners=False),
         [((1, 2, 3, 4), (1, 2, 3, 2))], domain=(-0.9, 0.9)),
    Spec("grid_sample_bicubic_reflection", lambda L, x, g: F_(L).grid_sample(
        x, g, mode="bicubic", padding_mode="reflection", align_corners=True),
        [((1, 1, 3, 4), (1, 2, 2, 2))], domain=(-0.9, 0.9)),
    Spec("grid_sample_3d_border", lambda L, x, g: F_(L).grid_sample(
        x, g * 1.2, padding_mode="border", align_corners=False),
        [((1, 1, 2, 3, 2), (1, 1, 2, 2, 3))], domain=(-0.9, 0.9)),
    Spec("affine_grid", lambda L, t: F_(L).affine_grid(t, (2, 1, 3, 4), align_corners=False),
         [((2, 2, 3),)], **COMPOSITE),
    Spec("affine_grid_3d", lambda L, t: F_(L).affine_grid(t, (1, 1, 2, 2, 3), align_corners=True),
         [((1, 3, 4),)], **COMPOSITE),
    Spec("pdist", lambda L, x: F_(L).pdist(x), [((4, 3),)], **COMPOSITE),
    Spec("pdist_p1_5", lambda L, x: F_(L).pdist(x, p=1.5), [((3, 2),)], **COMPOSITE),
    Spec("multilabel_margin_loss", lambda L, x: F_(L).multilabel_margin_loss(
        x, L.tensor([[3, 0, -1, 1], [1, 2, 3, -1]])), [((2, 4),)], **COMPOSITE),
    Spec("fractional_max_pool2d", _fmp2, [((1, 2, 5, 5),)], distinct=True, **COMPOSITE),
    Spec("fractional_max_pool3d", _fmp3, [((1, 1, 4, 4, 5),)], distinct=True, **COMPOSITE),
    Spec("conv_transpose3d", lambda L, x, w, b: F_(L).conv_transpose3d(
        x, w, b, stride=(2, 1, 1), padding=(0, 1, 0)), [((1, 2, 2, 3, 2), (2, 1, 2, 2, 2), (1,))]),
    Spec("margin_ranking_loss", lambda L, a, b: F_(L).margin_ranking_loss(
        a, b, _signs(L, a), margin=0.3), [((5,), (5,))]),
    Spec("hinge_embedding_loss", lambda L, x: F_(L).hinge_embedding_loss(
        x, _signs(L, x), margin=0.5, reduction="sum"), [((2, 3),)], domain=(-1.0, 2.0)),
    Spec("cosine_embedding_loss", lambda L, a, b: F_(L).cosine_embedding_loss(
        a, b, _signs(L, a[:, 0]), margin=0.1), [((4, 3), (4, 3))]),
    Spec("triplet_margin_loss", lambda L, a, p, n: F_(L).triplet_margin_loss(a, p, n, margin=2.0),
         [((3, 4), (3, 4), (3, 4))]),
    Spec("triplet_margin_loss_swap_p1", lambda L, a, p, n: F_(L).triplet_margin_loss(
        a, p, n, margin=1.5, p=1, swap=True, reduction="none"), [((3, 4), (3, 4), (3, 4))]),
    Spec("triplet_margin_with_distance_loss", lambda L, a, p, n:
         F_(L).triplet_margin_with_distance_loss(a, p, n, margin=2.0, swap=True),
         [((3, 4), (3, 4), (3, 4))]),
    Spec("multilabel_soft_margin_loss", lambda L, x: F_(L).multilabel_soft_margin_loss(
        x, (_signs(L, x) + 1) / 2), [((3, 4),)]),
    Spec("soft_margin_loss", lambda L, x: F_(L).soft_margin_loss(x, _signs(L, x)), [((2, 3),)]),
    Spec("poisson_nll_loss", lambda L, x: F_(L).poisson_nll_loss(x, _positive(_signs(L, x)) * 2),
         [((2, 3),)]),
    Spec("poisson_nll_loss_full_rates", lambda L, x: F_(L).poisson_nll_loss(
        _positive(x), _positive(_signs(L, x)) * 3, log_input=False, full=True,
        reduction="none"), [((2, 3),)]),
    Spec("gaussian_nll_loss", lambda L, x, y, v: F_(L).gaussian_nll_loss(x, y, _positive(v)),
         [((2, 3), (2, 3), (2, 3))]),
    Spec("gaussian_nll_loss_full_shared_var", lambda L, x, y, v: F_(L).gaussian_nll_loss(
        x, y, _positive(v), full=True, reduction="sum"), [((2, 3), (2, 3), (2, 1))]),
    Spec("ctc_loss", _ctc, [((6, 2, 4),)]),
    Spec("ctc_loss_sum_zero_infinity", lambda L, x: _ctc(L, x, reduction="sum",
                                                         zero_infinity=True), [((6, 2, 4),)]),
]
test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)
