"""Shape ops: views, joins, splits and reorderings, from one spec table plus PyTorch checks.

Every spec runs gradcheck/gradgradcheck in float64 and against PyTorch (values, dtype, grad_fn
name, a random VJP). Writes through each kind of view are specs too (the base's gradient goes
through ``CopySlices``); bad arguments must raise PyTorch's exception and message and leave the
inputs untouched.
"""
import warnings

import numpy as np
import pytest

import ember
from ember.ops.shape import helpers as _shape
from ember.ops.shape import joins as _joins

from ..opspec import Spec, op_tests
from ..oracle import raised

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")


def _write_through(view_fn):
    """A spec body: ``y = a * 1``, multiply a view of ``y`` by ``b`` in place, return ``y``."""
    def fn(L, a, b):
        y = a * 1
        view_fn(y).mul_(b)
        return y
    return fn


SPECS = [
    # reshaping views
    Spec("flatten", lambda L, a: a.flatten(), [((2, 3, 4),), ((),)]),
    Spec("flatten_range", lambda L, a: L.flatten(a, 1, -1) * 2, [((2, 3, 4),)]),
    Spec("flatten_copy", lambda L, a: a.t().flatten(), [((2, 3),)]),
    Spec("unflatten", lambda L, a: a.unflatten(1, (2, -1)), [((3, 4),)]),
    Spec("unflatten_neg_dim", lambda L, a: L.unflatten(a, -1, (1, 3)), [((2, 3),)]),
    Spec("ravel", lambda L, a: L.ravel(a.t()), [((2, 3),)]),
    Spec("squeeze_dims", lambda L, a: a.squeeze((0, 2)), [((1, 3, 1),), ((1, 3, 2),)]),
    Spec("squeeze_dim_not_one", lambda L, a: a.squeeze(1), [((2, 3),)]),
    Spec("squeeze_0d", lambda L, a: a.squeeze(-1), [((),)]),
    Spec("squeeze_all_none_one", lambda L, a: a.squeeze(), [((2, 3),)]),
    Spec("view_as", lambda L, a, b: a.view_as(b) * b, [((6,), (2, 3))]),
    Spec("reshape_as", lambda L, a, b: a.t().reshape_as(b) * b, [((2, 3), (6,))]),
    Spec("reshape_alias", lambda L, a: a.transpose(0, 1).reshape(3, 2, 2, 2), [((2, 3, 4),)]),
    Spec("contiguous", lambda L, a: a.t().contiguous(), [((2, 3),)]),
    # permutations
    Spec("permute", lambda L, a: a.permute(2, 0, 1), [((2, 3, 4),)]),
    Spec("permute_tuple", lambda L, a: L.permute(a, (-1, 0)), [((2, 3),)]),
    Spec("permute_0d", lambda L, a: a.permute(()) * 2, [((),)]),
    Spec("T_2d", lambda L, a: a.T, [((2, 3),)]),
    Spec("mT", lambda L, a: a.mT, [((2, 3),), ((2, 3, 4),)]),
    Spec("mH", lambda L, a: a.mH, [((2, 3, 4),)]),
    Spec("H", lambda L, a: a.H, [((2, 3),)]),
    Spec("adjoint", lambda L, a: L.adjoint(a), [((2, 3),)]),
    Spec("mH_complex", lambda L, a: a.to(L.complex128).mH * 1, [((2, 3),)],
         finite_differences=False),
    Spec("swapaxes", lambda L, a: L.swapaxes(a, 0, -1), [((2, 3, 4),)]),
    Spec("movedim", lambda L, a: a.movedim(0, -1), [((2, 3, 4),)]),
    Spec("moveaxis", lambda L, a: L.moveaxis(a, (0, 1), (2, 0)), [((2, 3, 4),)]),
    Spec("movedim_same", lambda L, a: a.movedim(1, 1), [((2, 3),)]),
    # broadcasting
    Spec("expand_same", lambda L, a: a.expand(2, 3), [((2, 3),)]),
    Spec("expand_new_dims", lambda L, a: a.expand(4, -1, 3), [((2, 1),)]),
    Spec("broadcast_to", lambda L, a: L.broadcast_to(a, (2, 3)), [((3,),), ((1, 3),), ((),)]),
    Spec("expand_as", lambda L, a, b: a.expand_as(b) * b, [((3,), (2, 3)), ((2, 1), (2, 3))]),
    Spec("broadcast_tensors", lambda L, a, b: L.broadcast_tensors(a, b),
         [((3,), (2, 3)), ((2, 1), (1, 3)), ((), (3,))]),
    Spec("broadcast_tensors_one", lambda L, a: L.broadcast_tensors(a * 2), [((3,),)]),
    # repeating
    Spec("repeat", lambda L, a: a.repeat(2, 1), [((3,),), ((2, 3),)]),
    Spec("repeat_new_dims", lambda L, a: a.repeat(2, 1, 3), [((2, 3),), ((),)]),
    Spec("repeat_zero", lambda L, a: L.cat([a.repeat(0, 1), a]), [((2, 3),)]),
    Spec("tile", lambda L, a: a.tile((2,)), [((2, 3),), ((3,),)]),
    Spec("tile_more", lambda L, a: L.tile(a, (2, 1, 2)), [((2, 3),)]),
    Spec("repeat_interleave", lambda L, a: a.repeat_interleave(2), [((2, 3),), ((),)]),
    Spec("repeat_interleave_dim", lambda L, a: L.repeat_interleave(a, 3, dim=0),
         [((2, 3),)]),
    Spec("repeat_interleave_tensor",
         lambda L, a: a.repeat_interleave(L.tensor([1, 0, 2]), dim=1), [((2, 3),)]),
    Spec("repeat_interleave_tensor_flat",
         lambda L, a: a.repeat_interleave(L.tensor([2, 0, 1, 1, 3, 0])), [((2, 3),)]),
    Spec("repeat_interleave_one_repeat",
         lambda L, a: a.repeat_interleave(L.tensor(2), dim=0), [((2, 3),)]),
    # joining
    Spec("hstack", lambda L, a, b: L.hstack([a, b]), [((3,), (2,)), ((2, 3), (2, 1)),
                                                      ((), (3,))]),
    Spec("vstack", lambda L, a, b: L.vstack((a, b)), [((3,), (3,)), ((2, 3), (3,)),
                                                      ((), ())]),
    Spec("row_stack", lambda L, a, b: L.row_stack((a, b)), [((3,), (3,))]),
    Spec("dstack", lambda L, a, b: L.dstack([a, b]), [((3,), (3,)), ((2, 3), (2, 3)),
                                                      ((), ())]),
    Spec("column_stack", lambda L, a, b: L.column_stack([a, b]),
         [((3,), (3, 2)), ((), ()), ((2, 3), (2,))]),
    Spec("atleast_1d", lambda L, a: L.atleast_1d(a) * 1, [((),), ((2, 3),)]),
    Spec("atleast_2d", lambda L, a: L.atleast_2d(a), [((),), ((3,),)]),
    Spec("atleast_3d", lambda L, a: L.atleast_3d(a), [((),), ((3,),), ((2, 3),)]),
    Spec("atleast_several", lambda L, a, b: L.atleast_2d(a, b), [((), (3,))]),
    # splitting (outputs are views)
    Spec("split", lambda L, a: a.split(2), [((5,),), ((4, 2),)]),
    Spec("split_dim", lambda L, a: L.split(a, 2, dim=1), [((2, 3),)]),
    Spec("split_sizes", lambda L, a: a.split([1, 2], dim=-1), [((2, 3),)]),
    Spec("split_with_sizes", lambda L, a: a.split_with_sizes((3, 0, 1)), [((4, 2),)]),
    Spec("split_partial", lambda L, a: a.split(2)[1] * 2, [((5,),)]),
    Spec("chunk", lambda L, a: a.chunk(2), [((5,),), ((4, 2),)]),
    Spec("chunk_dim", lambda L, a: L.chunk(a, 3, dim=-1), [((2, 7),)]),
    Spec("chunk_empty", lambda L, a: L.cat([t * 1 for t in a[:0].chunk(2)] + [a]), [((3,),)]),
    Spec("tensor_split", lambda L, a: a.tensor_split(3), [((7,),), ((2, 3),)]),
    Spec("tensor_split_indices", lambda L, a: L.tensor_split(a, [1, 4, 2], dim=1),
         [((2, 5),)]),
    Spec("tensor_split_tensor", lambda L, a: a.tensor_split(L.tensor([1, -1])), [((4,),)]),
    Spec("tensor_split_sections_tensor", lambda L, a: a.tensor_split(L.tensor(2)), [((5,),)]),
    Spec("unbind_dim", lambda L, a: L.unbind(a, -1), [((2, 3),)]),
    Spec("narrow", lambda L, a: a.narrow(1, 1, 2), [((2, 3),)]),
    Spec("narrow_negative_start", lambda L, a: L.narrow(a, 0, -2, 2), [((3,),)]),
    Spec("narrow_tensor_start", lambda L, a: a.narrow(0, L.tensor(1), 1), [((3, 2),)]),
    Spec("narrow_whole", lambda L, a: a.narrow(0, 0, 3), [((3,),)]),
    # reordering copies
    Spec("flip", lambda L, a: a.flip(0), [((3,),), ((2, 3),)]),
    Spec("flip_dims", lambda L, a: L.flip(a, (0, -1)), [((2, 3, 4),)]),
    Spec("flip_none", lambda L, a: a.flip(()), [((2, 3),), ((),)]),
    Spec("fliplr", lambda L, a: a.fliplr(), [((2, 3),)]),
    Spec("flipud", lambda L, a: L.flipud(a), [((3,),), ((2, 3),)]),
    Spec("roll", lambda L, a: a.roll(1), [((2, 3),), ((),)]),
    Spec("roll_negative", lambda L, a: L.roll(a, -7), [((5,),)]),
    Spec("roll_dims", lambda L, a: a.roll((1, -1), (0, 1)), [((2, 3),)]),
    Spec("roll_dim", lambda L, a: a.roll(2, -1), [((2, 3),)]),
    Spec("rot90", lambda L, a: a.rot90(), [((2, 3),)]),
    Spec("rot90_k", lambda L, a: L.rot90(a, 2, (1, 0)), [((2, 3),)]),
    Spec("rot90_negative", lambda L, a: a.rot90(-1, (0, 2)), [((2, 3, 4),)]),
    Spec("rot90_zero", lambda L, a: a.rot90(4), [((2, 3),)]),
    # in-place writes through each kind of view: the base gets CopySlices
    Spec("write_permute", _write_through(lambda y: y.permute(1, 0)), [((2, 3), (2,))]),
    Spec("write_transpose", _write_through(lambda y: y.transpose(0, 1)), [((2, 3), (2,))]),
    Spec("write_t", _write_through(lambda y: y.t()), [((2, 3), (3, 2))]),
    Spec("write_T", _write_through(lambda y: y.T), [((2, 3), (3, 2))]),
    Spec("write_mT", _write_through(lambda y: y.mT), [((2, 2, 3), (3, 1))]),
    Spec("write_movedim", _write_through(lambda y: y.movedim(0, -1)), [((2, 3, 2), (2,))]),
    Spec("write_narrow", _write_through(lambda y: y.narrow(1, 1, 2)), [((2, 3), (2,))]),
    Spec("write_narrow_of_permute", _write_through(lambda y: y.permute(1, 0).narrow(0, 1, 2)),
         [((2, 3), (2,))]),
    Spec("write_tensor_split", _write_through(lambda y: y.tensor_split(2)[1]), [((5,), ())]),
    Spec("write_flatten", _write_through(lambda y: y.flatten()), [((2, 3), (6,))]),
    Spec("write_unflatten", _write_through(lambda y: y.unflatten(0, (2, 3))), [((6,), (3,))]),
    Spec("write_squeeze", _write_through(lambda y: y.squeeze((0,))), [((1, 3), (3,))]),
    Spec("write_unsqueeze", _write_through(lambda y: y.unsqueeze(1)), [((3,), (1,))]),
    Spec("write_view", _write_through(lambda y: y.view(3, 2)), [((2, 3), (2,))]),
    Spec("write_slice_of_view", _write_through(lambda y: y.view(3, 2)[1:]), [((2, 3), (2,))]),
    # windows, differences, sums to a size, reshapes in place
    Spec("unfold", lambda L, a: a.unfold(1, 2, 1), [((2, 4),)]),
    Spec("unfold_step", lambda L, a: a.unfold(0, 2, 3) * 1, [((7,),), ((5, 2),)]),
    Spec("diff", lambda L, a: L.diff(a), [((3,),), ((2, 3),)]),
    Spec("diff_n", lambda L, a, b: a.diff(n=2, dim=0, prepend=b, append=b),
         [((2, 3), (1, 3))]),
    Spec("sum_to_size", lambda L, a: a.sum_to_size(1, 3), [((2, 3),)]),
    Spec("sum_to_size_lead", lambda L, a: a.sum_to_size(3), [((2, 3),)]),
    Spec("unsqueeze_", lambda L, a: (a * 1).unsqueeze_(0), [((2, 3),)]),
    Spec("squeeze_", lambda L, a: (a * 1).squeeze_(), [((2, 1),)]),
    Spec("squeeze_dim_", lambda L, a: (a * 1).squeeze_(1), [((2, 1),)]),
    Spec("squeeze_dims_", lambda L, a: (a * 1).squeeze_((0, 1)), [((1, 1, 3),)]),
    Spec("t_", lambda L, a: (a * 1).t_(), [((2, 3),)]),
    Spec("transpose_", lambda L, a: (a * 1).transpose_(0, 2), [((2, 1, 3),)]),
    # grids and blocks
    Spec("meshgrid_ij", lambda L, a, b: L.meshgrid(a, b, indexing="ij"), [((3,), (2,))]),
    Spec("meshgrid_xy", lambda L, a, b, c: L.meshgrid([a, b, c], indexing="xy"),
         [((3,), (2,), ()), ((1,), (4,), (2,))]),
    Spec("meshgrid_one", lambda L, a: L.meshgrid(a, indexing="xy"), [((3,),), ((),)]),
    Spec("cartesian_prod", lambda L, a, b: L.cartesian_prod(a, b), [((3,), (2,))]),
    Spec("cartesian_prod_three", lambda L, a, b, c: L.cartesian_prod(a, b, c) * 1,
         [((2,), (1,), (3,))]),
    Spec("combinations", lambda L, a: L.combinations(a), [((4,),)]),
    Spec("combinations_replacement", lambda L, a: L.combinations(a, 3, with_replacement=True),
         [((3,),)]),
    Spec("block_diag", lambda L, a, b, c: L.block_diag(a, b, c),
         [((2, 3), (2,), ()), ((0, 2), (3, 1), (1, 0))]),
    Spec("block_diag_one", lambda L, a: L.block_diag(a), [((2, 3),), ((3,),)]),
]

test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)


# ---------------------------------------------------------------------------- views


VIEWS = {
    "flatten": lambda t: t.flatten(),
    "unflatten": lambda t: t.unflatten(1, (1, 3)),
    "squeeze": lambda t: t[:1].squeeze((0,)),
    "permute": lambda t: t.permute(1, 0),
    "T": lambda t: t.T,
    "mT": lambda t: t.mT,
    "movedim": lambda t: t.movedim(0, 1),
    "expand": lambda t: t[:1].expand(4, 3),
    "broadcast_to": lambda t: ember.broadcast_to(t[:1], (4, 3)),
    "narrow": lambda t: t.narrow(1, 1, 2),
    "split": lambda t: t.split(1)[1],
    "chunk": lambda t: t.chunk(2, dim=1)[1],
    "tensor_split": lambda t: t.tensor_split(2, dim=1)[0],
    "split_with_sizes": lambda t: t.split([1, 1])[0],
    "unbind": lambda t: t.unbind(1)[2],
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_share_storage_and_version_counter(name):
    base = ember.arange(6.0).view(2, 3) * 1
    view = VIEWS[name](base)
    assert view._base is base and np.shares_memory(view._data, base._data)
    base.add_(1)
    assert view._version == base._version == 1
    if name not in ("expand", "broadcast_to"):  # no writes into a broadcast view
        total = base.sum().item()
        with ember.no_grad():
            view.mul_(0)
        assert not view._data.any() and base.sum().item() < total and base._version == 2


def _split_then(L, write, grad=True, view=lambda y: y.split(2)[0]):
    """Write into a view of ``y`` in place: the error (``y`` unchanged) or the result."""
    x = L.arange(4.0).requires_grad_()
    y = x * 1 if grad else L.zeros(4)
    v = view(y)
    try:
        write(L, v, x)
    except RuntimeError as e:
        return str(e), y.tolist(), y._version
    return y.tolist(), type(y.grad_fn).__name__


MULTI_OUTPUT_WRITES = {
    "split": lambda L: _split_then(L, lambda L, v, x: v.mul_(2)),
    "split_with_sizes": lambda L: _split_then(L, lambda L, v, x: v.add_(1),
                                              view=lambda y: y.split([1, 3])[1]),
    "chunk_select": lambda L: _split_then(L, lambda L, v, x: v.__setitem__(0, 5.0),
                                          view=lambda y: y.chunk(2)[1]),
    "unbind": lambda L: _split_then(L, lambda L, v, x: v.mul_(2),
                                    view=lambda y: y.view(2, 2).unbind(1)[0]),
    "iterate": lambda L: _split_then(L, lambda L, v, x: v.mul_(2),
                                     view=lambda y: next(iter(y.view(2, 2)))),
    "base_without_grad": lambda L: _split_then(L, lambda L, v, x: v.mul_(x[:2]), grad=False),
    "under_no_grad": lambda L: _split_then(L, lambda L, v, x: L.no_grad()(v.mul_)(2)),
    "tensor_split_is_fine": lambda L: _split_then(L, lambda L, v, x: v.mul_(2),
                                                  view=lambda y: y.tensor_split(2)[0]),
    "no_grad_view": lambda L: _split_then(L, lambda L, v, x: v.mul_(x[1:]),
                                          view=lambda y: L.no_grad()(lambda: y[1:])()),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(MULTI_OUTPUT_WRITES))
def test_writes_into_views_pytorch_refuses(name):
    """Outputs of split/chunk/unbind and views made under no_grad may not be written in place
    while autograd records; the error is PyTorch's and nothing is written."""
    assert MULTI_OUTPUT_WRITES[name](ember) == MULTI_OUTPUT_WRITES[name](torch)


@needs_torch
def test_copies_do_not_share_storage():
    for make in (lambda L, t: t.flip(0), lambda L, t: t.roll(1), lambda L, t: t.rot90(),
                 lambda L, t: t.repeat(1, 1), lambda L, t: t.t().flatten(),
                 lambda L, t: L.hstack([t])):
        for L in (ember, torch):
            base = L.ones(2, 2)
            out = make(L, base)
            out.mul_(3)
            assert base.tolist() == [[1.0, 1.0], [1.0, 1.0]]


@needs_torch
def test_identity_results_match_pytorch():
    def probe(L):
        a = L.ones(2, 3, requires_grad=True) * 1
        b = L.ones(3)
        return [a.flatten(0, 0) is a, L.broadcast_tensors(a, b)[0] is a,
                L.atleast_2d(a) is a, a.contiguous() is a, b.flatten() is b,
                a.expand(2, 3) is a, a.narrow(0, 0, 2) is a, a.split(2)[0] is a]
    assert probe(ember) == probe(torch)


@needs_torch
def test_pieces_and_shapes_match_pytorch():
    def probe(L):
        x = L.arange(7.0)
        return [[t.tolist() for t in parts] for parts in (
            x.split(3), x.chunk(3), x.chunk(4), x.tensor_split(3), x.tensor_split([-2, 1, 9]),
            L.tensor_split(x, L.tensor([2])), x[:0].split(2), x[:0].chunk(2),
            x.split([0, 7, 0]), L.broadcast_tensors(x, L.ones(2, 1)))]
    assert probe(ember) == probe(torch)


@needs_torch
def test_values_match_pytorch():
    def probe(L):
        x = L.arange(24).reshape(2, 3, 4)
        return [t.tolist() for t in (
            x.permute(2, 0, 1), x.movedim((0, 1), (2, 0)), x.flip(0, 2), x.roll(5),
            x.roll((1, 2), (0, 2)), x.rot90(3, (2, 1)), x.repeat(2, 1, 1, 1), x.tile(2),
            L.repeat_interleave(L.tensor([2, 0, 3])), x.repeat_interleave(2, dim=-1),
            x.repeat_interleave(L.tensor([1, 0, 2]), dim=1), L.dstack([x[0], x[1]]),
            L.column_stack([x[0, 0], x[1, 0]]), x.unflatten(-1, (2, 2)), x.mT, x.mH,
            x.squeeze((0, 1)), x[:1].squeeze((0, 2)), x.narrow(2, -3, 2))]
    assert probe(ember) == probe(torch)


@needs_torch
def test_complex_conjugate_transposes_match_pytorch():
    def probe(L):
        z = L.tensor([[1 + 2j, 3 - 1j], [0.5j, 2.0]], requires_grad=True)
        return [(repr(f(z) * 1), type(f(z).grad_fn).__name__)
                for f in (lambda z: z.mH, lambda z: z.H, lambda z: z.adjoint(),
                          lambda z: z.mT)]
    assert probe(ember) == probe(torch)


# ---------------------------------------------------------------------------- warnings


def _expected_warning(attr, ndim):
    """What PyTorch warns (once per process) for ``x.<attr>`` on an ``ndim``-d tensor."""
    if attr == "T" and ndim not in (0, 2):
        return [_shape.T_DEPRECATED]
    if ndim == 0:
        hint = ("This function is the identity in these cases." if attr in ("T", "mT") else
                "Consider using x.conj().")
        return [f"Tensor.{attr} is deprecated on 0-D tensors. {hint}"]
    return []


@needs_torch
@pytest.mark.parametrize("shape", [(2, 3, 4), (3,), (), (2, 3)])
@pytest.mark.parametrize("attr", ["T", "mT", "H", "mH"])
def test_deprecation_warnings_match_pytorch(shape, attr):
    def outcome(L):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = getattr(L.ones(shape), attr)
            except RuntimeError as e:
                return str(e), []
        return list(result.shape), [str(w.message).split(" (Triggered internally")[0]
                                    for w in caught if w.category is UserWarning]

    _shape._warned.clear()  # ember warns once per process too: start afresh
    (got, got_warnings), (want, want_warnings) = outcome(ember), outcome(torch)
    assert got == want
    assert got_warnings == _expected_warning(attr, len(shape))
    assert want_warnings in ([], got_warnings)  # empty if PyTorch already warned earlier


def test_deprecation_warns_once():
    _shape._warned.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for shape in [(2, 3, 4), (3,), (2, 3)]:
            assert ember.ones(shape).T.shape == shape[::-1]
    assert [str(w.message) for w in caught] == [_shape.T_DEPRECATED]
    assert caught[0].filename == __file__


# ---------------------------------------------------------------------------- bad input


BAD = {
    "flatten_order": lambda L, x: x.flatten(2, 1),
    "flatten_dim": lambda L, x: x.flatten(0, 5),
    "unflatten_product": lambda L, x: x.unflatten(2, (2, 3)),
    "unflatten_negative_dim": lambda L, x: x.unflatten(-1, (3, -1)),
    "unflatten_empty": lambda L, x: x.unflatten(2, ()),
    "unflatten_dim": lambda L, x: x.unflatten(3, (2, 2)),
    "squeeze_range": lambda L, x: x.squeeze((0, 3)),
    "squeeze_repeated": lambda L, x: x.squeeze((0, -3)),
    "permute_length": lambda L, x: x.permute(0, 1),
    "permute_repeated": lambda L, x: x.permute(0, 1, 1),
    "permute_range": lambda L, x: x.permute(0, 1, 3),
    "t_3d": lambda L, x: x.t(),
    "mT_1d": lambda L, x: x[0, 0].mT,
    "mH_1d": lambda L, x: x[0, 0].mH,
    "H_3d": lambda L, x: x.H,
    "H_1d": lambda L, x: x[0, 0].H,
    "adjoint_1d": lambda L, x: x[0, 0].adjoint(),
    "movedim_lengths": lambda L, x: x.movedim((0, 1), (2,)),
    "movedim_repeated_source": lambda L, x: x.movedim((0, -3), (1, 2)),
    "movedim_repeated_destination": lambda L, x: x.movedim((0, 1), (-1, 2)),
    "movedim_range": lambda L, x: x.movedim(3, 0),
    "expand_mismatch": lambda L, x: x[0, 0].expand(2, 5),
    "expand_fewer_sizes": lambda L, x: x.expand(3, 4),
    "expand_negative_leading": lambda L, x: x[0, 0].expand(-1, 4),
    "expand_negative": lambda L, x: x[0, 0].expand(2, -2),
    "broadcast_to": lambda L, x: L.broadcast_to(x, (3, 4)),
    "broadcast_tensors": lambda L, x: L.broadcast_tensors(x, L.ones(5)),
    "repeat_fewer": lambda L, x: x.repeat(2, 2),
    "repeat_negative": lambda L, x: x.repeat(1, 2, -1),
    "tile_negative": lambda L, x: x.tile((-1,)),
    "repeat_interleave_negative": lambda L, x: x.repeat_interleave(-1),
    "repeat_interleave_sizes": lambda L, x: x.repeat_interleave(L.tensor([1, 2]), dim=1),
    "repeat_interleave_sizes_negative_dim": lambda L, x: x.repeat_interleave(L.tensor([1, 2]),
                                                                             dim=-1),
    "repeat_interleave_negative_tensor": lambda L, x: x[0, 0].repeat_interleave(
        L.tensor([1, -2, 1, 1])),
    "repeat_interleave_float": lambda L, x: x[0, 0].repeat_interleave(L.ones(4)),
    "repeat_interleave_2d": lambda L, x: x.repeat_interleave(L.ones(1, 2, dtype=L.long)),
    "repeat_interleave_index_2d": lambda L, x: L.repeat_interleave(L.ones(1, 2, dtype=L.long)),
    "repeat_interleave_dim": lambda L, x: x.repeat_interleave(2, dim=3),
    "hstack_empty": lambda L, x: L.hstack([]),
    "vstack_empty": lambda L, x: L.vstack([]),
    "dstack_empty": lambda L, x: L.dstack([]),
    "column_stack_empty": lambda L, x: L.column_stack([]),
    "vstack_sizes": lambda L, x: L.vstack([x[0, 0], L.ones(5)]),
    "split_sum": lambda L, x: x.split([1, 2], 2),
    "split_sum_negative_dim": lambda L, x: x.split([1, 2], -1),
    "split_zero": lambda L, x: x.split(0, 2),
    "split_negative": lambda L, x: x.split(-1, 2),
    "split_negative_sizes": lambda L, x: x.split([5, -1], 2),
    "split_0d": lambda L, x: x.sum().split(1),
    "split_dim": lambda L, x: x.split(1, 3),
    "tensor_split_zero": lambda L, x: x.tensor_split(0, 2),
    "tensor_split_0d": lambda L, x: x.sum().tensor_split(1),
    "tensor_split_float": lambda L, x: x.tensor_split(L.tensor([1.0]), 2),
    "tensor_split_2d": lambda L, x: x.tensor_split(L.tensor([[1]]), 2),
    "chunk_zero": lambda L, x: x.chunk(0),
    "chunk_0d": lambda L, x: x.sum().chunk(1),
    "narrow_start": lambda L, x: x.narrow(0, 3, 1),
    "narrow_negative_start": lambda L, x: x.narrow(1, -4, 1),
    "narrow_length": lambda L, x: x.narrow(1, 1, 3),
    "narrow_negative_length": lambda L, x: x.narrow(1, 1, -1),
    "narrow_0d": lambda L, x: x.sum().narrow(0, 0, 1),
    "flip_repeated": lambda L, x: x.flip(0, -3),
    "flip_range": lambda L, x: x.flip(3),
    "fliplr_1d": lambda L, x: x[0, 0].fliplr(),
    "flipud_0d": lambda L, x: x.sum().flipud(),
    "roll_align": lambda L, x: x.roll((1, 2), 0),
    "roll_no_dims": lambda L, x: x.roll((1, 2)),
    "roll_range": lambda L, x: x.roll(1, 3),
    "roll_empty": lambda L, x: x.roll((), ()),
    "roll_0d_dim": lambda L, x: x.sum().roll(1, 0),
    "rot90_dims": lambda L, x: x.rot90(1, (0,)),
    "rot90_1d": lambda L, x: x[0, 0].rot90(),
    "rot90_same": lambda L, x: x.rot90(1, (0, 0)),
    "rot90_opposite": lambda L, x: x.rot90(1, (0, -3)),
    "rot90_range": lambda L, x: x.rot90(1, (0, 3)),
    "stack_empty": lambda L, x: L.stack([]),
}


@needs_torch
@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_raises_pytorchs_error(name):
    def outcome(L):
        x = L.ones(2, 3, 4, requires_grad=True)
        before = x.detach().clone()
        try:
            BAD[name](L, x)
        except Exception as e:  # noqa: BLE001
            assert x.grad is None and bool((x.detach() == before).all())
            return type(e).__name__, str(e)
        return None
    got, want = outcome(ember), outcome(torch)
    assert want is not None
    assert got == want


# ---------------------------------------------------------------------------- grids and blocks


def test_meshgrid_warns_once_without_indexing(torch):
    a, b = ember.tensor([1.0, 2.0, 3.0]), ember.tensor([4.0, 5.0])
    _shape._warned.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = ember.meshgrid(a, b)
        ember.meshgrid(a, b)
        ember.meshgrid(a, b, indexing="ij")
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        torch.meshgrid(torch.tensor([1.0]))
        expected = torch.meshgrid(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([4.0, 5.0]))
    assert [(w.category, str(w.message)) for w in caught] == [
        (UserWarning, _joins.MESHGRID_INDEXING)]
    assert caught[0].filename == __file__
    # PyTorch warns once per process: only the first call of the whole session shows it
    assert [str(w.message).split(" (Triggered internally")[0] for w in want] in (
        [], [_joins.MESHGRID_INDEXING])
    assert [repr(t) for t in first] == [repr(t) for t in expected]  # indexing="ij"


def test_grid_results_match_pytorch(torch):
    def run(L):
        a = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = L.tensor([4, 5])
        c = L.tensor(7.0)
        out = [*L.meshgrid(a, c, indexing="xy"), *L.meshgrid([b, b], indexing="xy"),
               L.cartesian_prod(b, b, b), L.combinations(a, 0), L.combinations(b, 4),
               L.combinations(b, 1), L.combinations(a, 2, True),
               L.block_diag(b, L.ones(2, 2, dtype=L.float16), c), L.block_diag(),
               L.block_diag(L.tensor([True]), b), L.block_diag(L.ones(0, 2), L.ones(2, 0)),
               L.tril_indices(3, 3), L.triu_indices(3, 4, 1), L.tril_indices(4, 3, -1),
               L.triu_indices(2, 4, -1, dtype=L.int32), L.triu_indices(0, 3),
               L.tril_indices(3, 0), L.tril_indices(3, 3, 10), L.triu_indices(3, 3, 5),
               L.tril_indices(2, 5, -3)]
        out += [L.vander(b), L.vander(b, 4, True), L.vander(L.tensor([1, 2], dtype=L.int8)),
                L.vander(L.tensor([True, False])), L.vander(a, 0), L.vander(a, 1),
                L.vander(L.tensor([], requires_grad=True))]
        same = L.cartesian_prod(a) is a
        shapes = [L.broadcast_shapes((2, 1), (3,)), L.broadcast_shapes(2, (3, 1), [1, 1, 1]),
                  L.broadcast_shapes(), L.broadcast_shapes(None, (0, 1), (5,)),
                  L.broadcast_shapes(L.Size([2, 3]), 1)]
        return [repr(t) for t in out] + [repr(s) for s in shapes] + [same]
    assert run(ember) == run(torch)


GRID_BAD = {
    "vander_2d": lambda L, a: L.vander(a.expand(2, 3)),
    "vander_negative": lambda L, a: L.vander(a, -1),
    "meshgrid_empty": lambda L, a: L.meshgrid(indexing="ij"),
    "meshgrid_indexing": lambda L, a: L.meshgrid(a, a, indexing="yx"),
    "meshgrid_dtypes": lambda L, a: L.meshgrid(a, a.long(), indexing="ij"),
    "cartesian_prod_2d": lambda L, a: L.cartesian_prod(a, a.expand(2, 3)),
    "cartesian_prod_0d": lambda L, a: L.cartesian_prod(a[0]),
    "combinations_2d": lambda L, a: L.combinations(a.expand(2, 3)),
    "combinations_negative": lambda L, a: L.combinations(a, -1),
    "block_diag_3d": lambda L, a: L.block_diag(a, a.expand(1, 2, 3)),
    "broadcast_shapes": lambda L, a: L.broadcast_shapes((2,), (3,)),
    "broadcast_shapes_later": lambda L, a: L.broadcast_shapes((3, 1), (1, 4), (2, 1, 5)),
    "broadcast_shapes_negative": lambda L, a: L.broadcast_shapes((-1,), (3,)),
    "broadcast_shapes_str": lambda L, a: L.broadcast_shapes((2,), "ab"),
    "broadcast_shapes_type": lambda L, a: L.broadcast_shapes((2,), {3}),
    "broadcast_shapes_float": lambda L, a: L.broadcast_shapes((2.0,)),
    "tril_indices_row": lambda L, a: L.tril_indices(-1, 3),
    "triu_indices_col": lambda L, a: L.triu_indices(3, -2),
    "tril_indices_dtype": lambda L, a: L.tril_indices(3, 3, dtype=L.float32),
    "triu_indices_dtype": lambda L, a: L.triu_indices(3, 3, dtype=L.int16),
}


@pytest.mark.parametrize("name", list(GRID_BAD))
def test_grid_bad_input_raises_pytorchs_error(name, torch):
    def outcome(L):
        return raised(lambda: GRID_BAD[name](L, L.tensor([1.0, 2.0, 3.0])))
    want = outcome(torch)
    assert want is not None
    assert outcome(ember) == want


def test_meshgrid_rejects_matrices_like_pytorch(torch):
    def outcome(L):
        with pytest.raises(RuntimeError) as info:
            L.meshgrid(L.tensor([1.0]), L.ones(2, 2), indexing="ij")
        return str(info.value)
    # PyTorch prints the offending tensor in its C++ format; the sentence before it is shared
    prefix = "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
    assert outcome(ember).startswith(prefix) and outcome(torch).startswith(prefix)


@pytest.mark.parametrize("kwargs", [{}, {"N": 4, "increasing": True}, {"N": 2}])
def test_vander_gradients(kwargs, torch):
    """PyTorch 2.13's own vander cannot be differentiated (its cumprod saves the slice it then
    overwrites: backward raises); ember's gives the derivative, checked by finite differences,
    and the same values and output node as PyTorch's forward."""
    x = ember.tensor([0.5, -1.5, 2.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: ember.vander(a, **kwargs), (x,))
    assert ember.autograd.gradgradcheck(lambda a: ember.vander(a, **kwargs), (x,))
    t = torch.tensor([0.5, -1.5, 2.0], dtype=torch.float64, requires_grad=True)
    assert repr(ember.vander(x, **kwargs)) == repr(torch.vander(t, **kwargs))
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        torch.vander(t, **kwargs).sum().backward()


def test_many_pieces_are_made_with_the_collector_paused_and_resumed():
    """``split``/``unbind`` into 10,000 pieces or more pause the garbage collector while they
    make them (``slices._collector_paused``): afterwards it runs again (and stays off where the
    caller turned it off), and the pieces are ordinary views with their gradients."""
    import gc

    assert gc.isenabled()
    a = ember.arange(30001.0, requires_grad=True)
    pieces = a.split(2)
    assert gc.isenabled() and len(pieces) == 15001 and pieces[-1].tolist() == [30000.0]
    assert pieces[7].tolist() == [14.0, 15.0] and pieces[7]._base is a
    (pieces[7] * 3).sum().backward()
    grad = np.zeros(30001)
    grad[14:16] = 3
    assert np.array_equal(a.grad.numpy(), grad)
    rows = ember.arange(24000.0).reshape(12000, 2).unbind(0)
    assert gc.isenabled() and len(rows) == 12000 and rows[5].tolist() == [10.0, 11.0]
    gc.disable()
    try:
        a.detach().split(1)
        assert not gc.isenabled()
    finally:
        gc.enable()
    b = ember.zeros(20000)
    piece = b.split(4)[3]
    b.add_(1)  # a write into the base shows through the piece (its view function's ints)
    assert piece.tolist() == [1.0] * 4 and b.split(4)[3][1:].tolist() == [1.0] * 3
