"""The short paths tiny models take (makemore's RNN and MLP steps): ``cat`` of plain tensors,
``x[:, t, :]``, ``nll_loss`` with padding targets (``ignore_index=-1``) and the engine's
backward without reduced-precision values. Each against PyTorch, values and gradients, and
against the general path they bypass (errors, dtypes, views)."""
import numpy as np
import pytest

import ember
from ember.ops.nn import sparse

from ..conftest import to_np

DTYPES = [np.float32, np.float64]


def _pair(torch, shape, dtype, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return (ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True))


def _close(a, b, dtype):
    tol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(to_np(a), to_np(b), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1, -2])
def test_cat_of_plain_tensors_values_and_grads(torch, dtype, dim):
    (ae, at), (be, bt) = _pair(torch, (3, 4), dtype, 1), _pair(torch, (3, 4), dtype, 2)
    ce_, ct = ember.cat([ae, be], dim), torch.cat([at, bt], dim)
    _close(ce_, ct, dtype)
    assert ce_.grad_fn.name() == ct.grad_fn.name()
    w = np.random.default_rng(3).standard_normal(tuple(ct.shape)).astype(dtype)
    (ce_ * ember.tensor(w)).sum().backward()
    (ct * torch.tensor(w)).sum().backward()
    _close(ae.grad, at.grad, dtype)
    _close(be.grad, bt.grad, dtype)


def test_cat_outside_the_short_path_still_promotes_and_checks():
    a = ember.ones(2, 3)
    b = ember.ones(2, 3, dtype=ember.float64)
    assert ember.cat([a, b], 1).dtype == ember.float64  # as torch.cat promotes
    for args in (([ember.ones(2, 3), ember.ones(3, 3)], 1), ([ember.ones(2, 3)], 2),
                 ([ember.ones(2, 3), ember.ones(2)], 0)):
        with pytest.raises((RuntimeError, IndexError)):
            ember.cat(*args)
    # a legacy empty 1-d tensor joins any rank (the general path)
    assert ember.cat([ember.ones(2, 3), ember.ones(0)], 1).shape == (2, 3)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("key", [(slice(None), 2, slice(None)), (slice(None), -1), (1, 0),
                                 (slice(None), slice(None), 3), (slice(None), slice(1, 3)),
                                 (slice(None, None, 2), 1), (slice(-2, None),),
                                 (slice(None), slice(None)), (0, slice(2, 100), slice(1, 4, 2))])
def test_select_key_values_grads_and_view(torch, dtype, key):
    xe, xt = _pair(torch, (3, 4, 5), dtype)
    ye, yt = xe[key], xt[key]
    _close(ye, yt, dtype)
    assert ye.grad_fn.name() == yt.grad_fn.name()
    assert ye._base is xe and ye is not xe  # a view, as the general path makes it
    w = np.random.default_rng(4).standard_normal(tuple(yt.shape)).astype(dtype)
    (ye * ember.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    _close(xe.grad, xt.grad, dtype)
    with ember.no_grad():
        base = ember.zeros(3, 4, 5)
        base[key].fill_(1.0)  # writes show through the view
        assert base.sum().item() == yt.numel()
    xe._data[...] = 0  # and reads see the base's writes
    assert float(ye.abs().sum()) == 0


def test_select_key_errors_match_pytorch(torch):
    for key in ((slice(None), 4), (slice(None), slice(None), 0), (-4, 0),
                (slice(None), slice(None, None, -1)), (slice(None, None, 0),)):
        with pytest.raises((IndexError, ValueError)) as want:
            torch.ones(3, 4)[key]
        with pytest.raises(want.type) as got:
            ember.ones(3, 4)[key]
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-1, 2, -100])
def test_nll_and_cross_entropy_with_padding_targets(torch, dtype, reduction, ignore_index):
    xe, xt = _pair(torch, (9, 5), dtype)
    t = np.array([0, -1, 4, 2, -1, 2, 1, 3, 0])
    t[t == -1] = ignore_index  # the padding
    for f in ("nll_loss", "cross_entropy"):
        xe.grad = xt.grad = None
        le = getattr(ember.nn.functional, f)(xe, ember.tensor(t), ignore_index=ignore_index,
                                             reduction=reduction)
        lt = getattr(torch.nn.functional, f)(xt, torch.tensor(t), ignore_index=ignore_index,
                                             reduction=reduction)
        _close(le, lt, dtype)
        w = np.random.default_rng(5).standard_normal(tuple(lt.shape)).astype(dtype)
        (le * ember.tensor(w)).sum().backward()
        (lt * torch.tensor(w)).sum().backward()
        _close(xe.grad, xt.grad, dtype)


def test_nll_with_every_target_ignored_is_nan_with_zero_gradient(torch):
    for L in (ember, torch):
        x = L.zeros(3, 4, requires_grad=True)
        loss = L.nn.functional.nll_loss(x, L.tensor([-1, -1, -1]), ignore_index=-1)
        loss.backward()
        assert np.isnan(loss.item()) and (to_np(x.grad) == 0).all()


def test_nll_target_out_of_range_beside_ignore_index():
    x = ember.zeros(3, 4)
    # a negative target that is not ignore_index, beside one that is
    with pytest.raises(IndexError, match="Target -3 is out of bounds"):
        ember.nn.functional.nll_loss(x, ember.tensor([-3, -5, 1]), ignore_index=-5)
    with pytest.raises(IndexError, match="Target 4 is out of bounds"):
        ember.nn.functional.nll_loss(x, ember.tensor([-1, 4, 1]), ignore_index=-1)
    with pytest.raises(IndexError, match="Target -2 is out of bounds"):
        ember.nn.functional.nll_loss(x, ember.tensor([-1, -2, 1]), ignore_index=-1)


def test_nll_gradient_by_finite_differences_float64():
    x = ember.tensor(np.random.default_rng(6).standard_normal((5, 4)), requires_grad=True)
    t = ember.tensor([1, -1, 3, 0, -1])
    assert ember.autograd.gradcheck(
        lambda x: ember.nn.functional.cross_entropy(x, t, ignore_index=-1), (x,))
    assert ember.autograd.gradgradcheck(
        lambda x: ember.nn.functional.cross_entropy(x, t, ignore_index=-1), (x,))


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16])
def test_backward_of_reduced_precision_through_general_nodes(torch, dtype):
    """cat's node (the general ``apply``) still upcasts reduced-precision gradients."""
    tdtype = getattr(torch, str(dtype).split(".")[-1])
    a = np.random.default_rng(7).standard_normal((3, 4)).astype(np.float32)
    outs = []
    for L, dt in ((ember, dtype), (torch, tdtype)):
        x = L.tensor(a, dtype=dt, requires_grad=True)
        y = L.cat([x, x * 2], 1).sum(dtype=L.float32) if L is ember else \
            L.cat([x, x * 2], 1).sum(dtype=torch.float32)
        y.backward()
        outs.append((x.grad.dtype, to_np(x.grad.float())))
    assert str(outs[0][0]).split(".")[-1] == str(outs[1][0]).split(".")[-1]
    np.testing.assert_array_equal(outs[0][1], outs[1][1])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(32, 16), (7,), (4, 3, 5)])
def test_embedding_backward_into_a_few_rows(torch, dtype, shape):
    """A table of a few rows (a character vocabulary) sums its gradient by one one-hot
    product; values against PyTorch, padding_idx too."""
    rng = np.random.default_rng(8)
    idx = rng.integers(0, 27, shape)
    for padding_idx in (None, 3):
        we, wt = _pair(torch, (27, 64), dtype, 9)
        ye = ember.nn.functional.embedding(ember.tensor(idx), we, padding_idx=padding_idx)
        yt = torch.nn.functional.embedding(torch.tensor(idx), wt, padding_idx=padding_idx)
        w = rng.standard_normal(tuple(yt.shape)).astype(dtype)
        (ye * ember.tensor(w)).sum().backward()
        (yt * torch.tensor(w)).sum().backward()
        _close(we.grad, wt.grad, dtype)


def test_embedding_backward_keeps_an_inf_in_its_row(torch):
    """0 * inf in the one-hot product would make every row nan: the exact sum runs instead."""
    idx = np.array([0, 2, 2, 5])
    g = np.ones((4, 3), np.float32)
    g[1, 1] = np.inf
    g[3, 0] = np.nan
    grads = []
    for L in (ember, torch):
        w = L.zeros(6, 3, requires_grad=True)
        L.nn.functional.embedding(L.tensor(idx), w).backward(L.tensor(g))
        grads.append(to_np(w.grad))
    np.testing.assert_array_equal(grads[0], grads[1])


def test_embedding_gradient_by_finite_differences_float64():
    w = ember.tensor(np.random.default_rng(10).standard_normal((5, 3)), requires_grad=True)
    idx = ember.tensor([[0, 4, 4], [1, 0, 2]])
    assert ember.autograd.gradcheck(lambda w: ember.nn.functional.embedding(idx, w), (w,))
    assert ember.autograd.gradgradcheck(lambda w: ember.nn.functional.embedding(idx, w), (w,))


@pytest.mark.parametrize("join", ["cat", "stack"])
def test_variadic_nodes_fast_backward_equals_the_general_one(join):
    """cat's and stack's nodes take ``OpNode.apply``'s fast path in an ordinary backward; it
    gives the general path's gradients (recorded, under create_graph)."""
    rng = np.random.default_rng(11)
    xs = [ember.tensor(rng.standard_normal((3, 4)).astype(np.float32), requires_grad=rg)
          for rg in (True, False, True)]
    y = getattr(ember, join)(xs, 1)
    g = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    plain = y.grad_fn.apply([g], False)
    recorded = y.grad_fn.apply([ember.tensor(g)], True)
    for x, p, r in zip(xs, plain, recorded):
        assert (p is None) == (r is None) == (not x.requires_grad)
        if p is not None:
            assert type(p) is np.ndarray and p.shape == (3, 4)
            np.testing.assert_array_equal(p, r._data)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n, num, d", [(1536, 28, 64), (4096, 28, 16), (512, 8, 256),
                                       (2048, 28, 64), (1024, 8, 256)])
def test_embedding_backward_one_hot_and_sorted_paths(monkeypatch, dtype, n, num, d):
    """makemore's MLP (3 context tokens of 512 positions into 28 rows of 64, a third of them
    the padding token) takes the one-hot product; past its bounds (the last two shapes) the
    sorted sums do. Both within rounding of the exact sum, in the rows' dtype."""
    rng = np.random.default_rng(11)
    index = rng.integers(0, num, n)
    index[rng.random(n) < 0.35] = 0  # one long run, as the padding token makes
    rows = rng.standard_normal((n, d)).astype(dtype)
    one_hot = n * d <= sparse._ONE_HOT_SIZE and n * d * num <= sparse._ONE_HOT_MACS
    assert one_hot == ((n, num, d) in [(1536, 28, 64), (4096, 28, 16), (512, 8, 256)])
    if one_hot:  # the sorted path would sort
        monkeypatch.setattr(sparse.np, "argsort", None)
    got = sparse._segment_sum(np, rows, index, num)
    want = np.zeros((num, d))
    np.add.at(want, index, rows.astype(np.float64))
    absum = np.zeros((num, d))
    np.add.at(absum, index, np.abs(rows).astype(np.float64))
    assert got.dtype == dtype and got.shape == (num, d)
    eps = np.finfo(dtype).eps
    assert (np.abs(got - want) <= 4 * eps * absum).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_cat_with_legacy_empty_inputs_values_and_grads(torch, dtype):
    """The inputs of shape (0,) that ``cat`` skips (its forward's other path), against the
    plain path's values and PyTorch's, gradients included."""
    (ae, at), (be, bt) = _pair(torch, (2, 3), dtype, 1), _pair(torch, (2, 3), dtype, 2)
    for dim in (0, 1, -1):
        ce_ = ember.cat([ember.zeros(0, dtype=ae.dtype), ae, ember.zeros(0, dtype=ae.dtype), be],
                        dim)
        ct = torch.cat([torch.zeros(0, dtype=at.dtype), at, torch.zeros(0, dtype=at.dtype), bt],
                       dim)
        _close(ce_, ct, dtype)
        _close(ce_, ember.cat([ae, be], dim), dtype)
        w = np.random.default_rng(3).standard_normal(tuple(ct.shape)).astype(dtype)
        (ce_ * ember.tensor(w)).sum().backward()
        (ct * torch.tensor(w)).sum().backward()
        _close(ae.grad, at.grad, dtype)
        _close(be.grad, bt.grad, dtype)
        ae.grad = be.grad = at.grad = bt.grad = None
    one_d = ember.cat([ember.zeros(0, dtype=ae.dtype), ae[0], ember.zeros(0, dtype=ae.dtype)])
    _close(one_d, torch.cat([torch.zeros(0, dtype=at.dtype), at[0].detach()]), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2, -3])
def test_stack_on_every_dim_values_and_grads(torch, dtype, dim):
    """``stack`` as one concatenation along ``dim`` reshaped (an RNN's hidden states on dim
    1), and the new last dim, against PyTorch, gradients included; 0-d and empty inputs."""
    pairs = [_pair(torch, (3, 4), dtype, seed) for seed in range(5)]
    se, st = ember.stack([e for e, _ in pairs], dim), torch.stack([t for _, t in pairs], dim)
    _close(se, st, dtype)
    w = np.random.default_rng(9).standard_normal(tuple(st.shape)).astype(dtype)
    (se * ember.tensor(w)).sum().backward()
    (st * torch.tensor(w)).sum().backward()
    for e, t in pairs:
        _close(e.grad, t.grad, dtype)
    if dim in (0, -1):
        scalars = [ember.tensor(dtype(k)) for k in range(3)]
        _close(ember.stack(scalars, dim), torch.stack([torch.tensor(dtype(k)) for k in range(3)],
                                                      dim), dtype)
    empty = ember.stack([ember.zeros(3, 0, dtype=se.dtype)] * 2, dim)
    assert tuple(empty.shape) == tuple(torch.stack([torch.zeros(3, 0)] * 2, dim).shape)
