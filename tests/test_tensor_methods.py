"""Tensor methods beyond the op families, against PyTorch: factories on a tensor
(``new_zeros``...), in-place random fills, aliases and views (``relu``, ``select``, ``real``,
``conj``, in-place reshapes) and queries (``nbytes``, ``storage_offset``, ``layout``...)."""
import numpy as np
import pytest

import ember

from .oracle import outcome

torch = pytest.importorskip("torch")


def _same(e, t):
    assert repr(e) == repr(t)


# --------------------------------------------------------------------------- factories

FACTORIES = [
    lambda L, x: x.new_zeros(2, 3),
    lambda L, x: x.new_zeros((2,), dtype=L.int32),
    lambda L, x: x.new_ones([3], requires_grad=True),
    lambda L, x: x.new_full((2,), 3),
    lambda L, x: x.new_empty(2, 3).shape,
    lambda L, x: x.new_tensor([1, 2]),
    lambda L, x: x.new_tensor(2.5, requires_grad=True),
    lambda L, x: x.new_tensor([[1, 2]], dtype=L.int64),
    lambda L, x: x.long().new_zeros(2, requires_grad=True),
]


@pytest.mark.parametrize("make", FACTORIES)
@pytest.mark.parametrize("dtype", ["float64", "int16"])
def test_factories_match_pytorch(make, dtype):
    e = ember.ones(2, dtype=getattr(ember, dtype))
    t = torch.ones(2, dtype=getattr(torch, dtype))
    _same(outcome(lambda: make(ember, e)), outcome(lambda: make(torch, t)))


def test_new_tensor_from_a_tensor_warns_and_copies():
    src = ember.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="rather than tensor.new_tensor"):
        out = ember.zeros(1, dtype=ember.float64).new_tensor(src)
    assert out.dtype is ember.float64 and not out.requires_grad and out.grad_fn is None


# --------------------------------------------------------------------------- random fills

FILLS = [("uniform_", (-2.0, 3.0)), ("normal_", (1.0, 2.0)), ("bernoulli_", (0.3,)),
         ("random_", (2, 9)), ("exponential_", (2.0,)), ("geometric_", (0.25,)),
         ("log_normal_", (0.5, 0.5)), ("cauchy_", (1.0, 2.0))]


@pytest.mark.parametrize("name,args", FILLS)
def test_fills_follow_pytorch_distribution(name, args):
    """Same dtype and shape; means (medians for Cauchy) of 20,000 draws agree."""
    ember.manual_seed(0)
    torch.manual_seed(0)
    e = getattr(ember.zeros(100, 200), name)(*args)
    t = getattr(torch.zeros(100, 200), name)(*args)
    assert e.shape == t.shape and e.dtype == ember.float32
    ev, tv = e.numpy(), t.numpy()
    if name == "cauchy_":
        ev, tv = np.median(ev), np.median(tv)
    else:
        assert ev.min() >= tv.min() - 0.5 * abs(tv.min()) - 1e-6
        ev, tv = ev.mean(), tv.mean()
    assert abs(ev - tv) < 0.1 * max(1.0, abs(tv))


@pytest.mark.parametrize("name,args", FILLS)
def test_fills_are_reproducible_under_manual_seed(name, args):
    draws = []
    for _ in range(2):
        ember.manual_seed(7)
        draws.append(getattr(ember.empty(50), name)(*args).tolist())
    assert draws[0] == draws[1]


@pytest.mark.parametrize("dtype", ["int64", "uint8", "int8", "bool", "float16", "float64"])
def test_random_default_ranges_and_dtypes(dtype):
    e = ember.zeros(2000, dtype=getattr(ember, dtype)).random_()
    t = torch.zeros(2000, dtype=getattr(torch, dtype)).random_()
    assert str(e.dtype) == str(t.dtype)
    bound = float(t.double().max()) * 4
    assert 0 <= float(e.double().min()) and float(e.double().max()) <= bound


BAD_FILLS = [
    lambda x: x.uniform_(2, 1), lambda x: x.normal_(0, -1), lambda x: x.bernoulli_(1.5),
    lambda x: x.bernoulli_(-0.1), lambda x: x.exponential_(0), lambda x: x.geometric_(0),
    lambda x: x.geometric_(1.5), lambda x: x.log_normal_(0, -1), lambda x: x.cauchy_(0, -1),
    lambda x: x.random_(5, 2), lambda x: x.random_(0, 0), lambda x: x.random_(-3),
    lambda x: x.long().uniform_(), lambda x: x.long().normal_(), lambda x: x.bool().uniform_(),
    lambda x: x.long().exponential_(), lambda x: x.bool().exponential_(),
    lambda x: x.long().cauchy_(), lambda x: x.int().cauchy_(), lambda x: x.long().log_normal_(),
    lambda x: x.byte().random_(-1, 5), lambda x: x.byte().random_(0, 500),
    lambda x: x.char().random_(200), lambda x: x.uniform_(**{"from": 1, "to": 0}),
    lambda x: x.bernoulli_(x.new_tensor([0.5, 2.0, 0.1])),
    lambda x: x.float().float_power_(2), lambda x: x.double().float_power_(2),
]


@pytest.mark.parametrize("fill", BAD_FILLS)
def test_fill_errors_match_pytorch(fill):
    e, t = outcome(lambda: fill(ember.zeros(3))), outcome(lambda: fill(torch.zeros(3)))
    if isinstance(t, tuple):
        assert e == t
    else:
        assert str(e.dtype) == str(t.dtype) and e.shape == t.shape


@pytest.mark.parametrize("name,args", FILLS)
def test_fills_refuse_leaves_and_record_a_zero_derivative(name, args):
    for L in (ember, torch):
        a = L.ones(3, requires_grad=True)
        assert outcome(lambda: getattr(a, name)(*args))[1].startswith("a leaf Variable")
    e, t = ember.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    ye, yt = getattr(e * 2, name)(*args), getattr(t * 2, name)(*args)
    assert type(ye.grad_fn).__name__ == type(yt.grad_fn).__name__
    ye.sum().backward()
    assert e.grad.tolist() == [0.0, 0.0, 0.0]
    with ember.no_grad():
        getattr(e, name)(*args)  # allowed outside grad mode


# --------------------------------------------------------------------------- aliases, views

METHODS = [
    lambda L, x: x.relu(), lambda L, x: x.clone().relu_(), lambda L, x: x.positive(),
    lambda L, x: L.positive(x.bool()), lambda L, x: x.type_as(L.tensor([1])),
    lambda L, x: x.select(1, -1), lambda L, x: L.select(x, 0, 1), lambda L, x: x.select(0, 5),
    lambda L, x: x.select(2, 0), lambda L, x: x.conj() is x, lambda L, x: x.is_conj(),
    lambda L, x: x.is_neg(), lambda L, x: x.resolve_conj() is x,
    lambda L, x: x.resolve_neg() is x, lambda L, x: x.real is x, lambda L, x: x.imag,
    lambda L, x: x.clone().unsqueeze_(1), lambda L, x: x.clone().unsqueeze_(-1).squeeze_(),
    lambda L, x: x.clone().t_(), lambda L, x: x.clone().unsqueeze_(0).t_(),
    lambda L, x: x.clone().transpose_(0, 1), lambda L, x: x.clone().swapdims_(1, 0),
    lambda L, x: x.clone().swapaxes_(0, -1), lambda L, x: x.clone().squeeze_((0,)),
]


@pytest.mark.parametrize("method", METHODS)
def test_aliases_match_pytorch(method):
    e = ember.tensor([[1.0, -2.0, 0.0], [3.5, -0.5, 2.0]])
    t = torch.tensor([[1.0, -2.0, 0.0], [3.5, -0.5, 2.0]])
    _same(outcome(lambda: method(ember, e)), outcome(lambda: method(torch, t)))


COMPLEX = [
    lambda c: c.real, lambda c: c.imag, lambda c: c.conj(), lambda c: c.conj().is_conj(),
    lambda c: c.conj().resolve_conj(), lambda c: c.conj().resolve_conj().is_conj(),
    lambda c: c.real * 2 + c.imag,
]


@pytest.mark.parametrize("fn", COMPLEX)
def test_complex_parts_match_pytorch(fn):
    """Values, grad_fn and the gradient reaching a complex leaf."""
    e = ember.tensor([1 + 2j, -3 + 0.5j], requires_grad=True)
    t = torch.tensor([1 + 2j, -3 + 0.5j], requires_grad=True)
    ye, yt = fn(e), fn(t)
    _same(ye, yt)
    if isinstance(yt, torch.Tensor):
        gt = torch.ones(yt.shape, dtype=yt.dtype)
        ye.backward(ember.tensor(gt.numpy()))
        yt.backward(gt)
        np.testing.assert_allclose(e.grad.numpy(), t.grad.resolve_conj().numpy())


def test_real_and_imag_are_views():
    c = ember.tensor([1 + 2j, 3 - 1j])
    c.imag[0] = 5.0
    c.real.mul_(2)
    assert c.tolist() == [2 + 5j, 6 - 1j]


def test_in_place_reshapes_record_pytorch_nodes_and_versions():
    for L in (ember, torch):
        a = L.ones(2, 3, requires_grad=True)
        y = a * 1
        y.unsqueeze_(0).transpose_(0, 2).squeeze_(2)
        assert y._version == 3 and tuple(y.shape) == (3, 2)
        (y * L.arange(6.0).reshape(3, 2)).sum().backward()
        assert type(y.grad_fn).__name__ == "SqueezeBackward4"
    assert ember.ones(2, 3, requires_grad=True).grad is None
    e, t = ember.ones(2, 3, requires_grad=True), torch.ones(2, 3, requires_grad=True)
    for L, a in ((ember, e), (torch, t)):
        y = a * 1
        y.unsqueeze_(0).transpose_(0, 2).squeeze_(2)
        (y * L.arange(6.0).reshape(3, 2)).sum().backward()
    assert e.grad.tolist() == t.grad.tolist()
    assert outcome(lambda: e.unsqueeze_(0)) == outcome(lambda: t.unsqueeze_(0))


def test_in_place_reshape_of_a_view_writes_through_to_its_base():
    base = ember.zeros(2, 3)
    row = base[1]
    row.unsqueeze_(0).add_(1)
    assert row.shape == (1, 3) and base.tolist() == [[0.0] * 3, [1.0] * 3]


# --------------------------------------------------------------------------- queries

QUERIES = [
    lambda L, x: x.is_cpu, lambda L, x: x.get_device(), lambda L, x: x.nbytes,
    lambda L, x: x.itemsize, lambda L, x: x.is_signed(), lambda L, x: x.is_inference(),
    lambda L, x: x.layout, lambda L, x: L.strided, lambda L, x: x.layout is L.strided,
    lambda L, x: x.is_sparse, lambda L, x: x.is_quantized, lambda L, x: x.is_meta,
    lambda L, x: x.storage_offset(), lambda L, x: x[1:].storage_offset(),
    lambda L, x: x.reshape(-1)[3:].storage_offset(), lambda L, x: x.t()[1].storage_offset(),
    lambda L, x: x.is_same_size(L.zeros(2, 3)), lambda L, x: x.is_same_size(L.zeros(3, 2)),
    lambda L, x: x.is_nonzero(), lambda L, x: x[0, 0].is_nonzero(),
    lambda L, x: x[:0].is_nonzero(), lambda L, x: x[1, :1].is_nonzero(),
]


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool", "complex64"])
def test_queries_match_pytorch(query, dtype):
    data = [[0, 1, 2], [3, 4, 5]]
    e = ember.tensor(data, dtype=getattr(ember, dtype))
    t = torch.tensor(data, dtype=getattr(torch, dtype))
    _same(outcome(lambda: query(ember, e)), outcome(lambda: query(torch, t)))
