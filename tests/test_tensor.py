"""Tensors and dtypes: promotion, creation, conversions, Python protocols, bad input.

Where PyTorch is importable every case is run on both libraries and compared.
"""
import itertools
import warnings

import numpy as np
import pytest

import ember

from .oracle import raised

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
          "complex64", "complex128"]


def _make(lib, dtype, ndim):
    return lib.ones((2,) * ndim, dtype=getattr(lib, dtype))


@needs_torch
@pytest.mark.parametrize("a,b", list(itertools.product(DTYPES, DTYPES)))
def test_promotion_of_tensors_matches_pytorch(a, b):
    for da, db in [(1, 1), (1, 0), (0, 1), (0, 0)]:
        if {a, b} & {"float16"} and any(d.startswith("complex") for d in (a, b)) and da != db:
            continue  # PyTorch answers complex32, which NumPy (so ember) does not have
        got = (_make(ember, a, da) * 0 + _make(ember, b, db) if a != "bool" or b != "bool"
               else _make(ember, a, da) & _make(ember, b, db)).dtype
        want = (_make(torch, a, da) * 0 + _make(torch, b, db) if a != "bool" or b != "bool"
                else _make(torch, a, da) & _make(torch, b, db)).dtype
        assert str(got) == str(want), (a, b, da, db)
    assert str(ember.promote_types(getattr(ember, a), getattr(ember, b))) == \
        str(torch.promote_types(getattr(torch, a), getattr(torch, b)))


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scalar", [True, 2, 2.5, 1 + 2j])
def test_promotion_with_python_scalars_matches_pytorch(dtype, scalar):
    if dtype == "bool" and scalar is True or dtype == "float16" and isinstance(scalar, complex):
        return  # bool*True is bool on both; float16*1j is complex32 in PyTorch, absent here
    e = _make(ember, dtype, 1) * scalar
    t = _make(torch, dtype, 1) * scalar
    assert str(e.dtype) == str(t.dtype)
    assert str((_make(ember, dtype, 1) / 2).dtype) == str((_make(torch, dtype, 1) / 2).dtype)


@needs_torch
def test_default_dtype_changes_float_results():
    for lib in (ember, torch):
        lib.set_default_dtype(lib.float64)
        try:
            assert str(lib.tensor([1.5]).dtype) == "torch.float64"
            assert str((lib.tensor([1, 2]) * 1.5).dtype) == "torch.float64"
            assert str(lib.tensor([1j]).dtype) == "torch.complex128"
        finally:
            lib.set_default_dtype(lib.float32)
    with pytest.raises(TypeError):
        ember.set_default_dtype(ember.int64)


@needs_torch
@pytest.mark.parametrize("make", [
    lambda L: L.tensor([1, 2]), lambda L: L.tensor([1.0, 2]), lambda L: L.tensor([True, False]),
    lambda L: L.tensor(3), lambda L: L.tensor(3.5), lambda L: L.tensor([[1j]]),
    lambda L: L.tensor(np.arange(3, dtype=np.float64)), lambda L: L.tensor([]),
    lambda L: L.zeros(2, 3), lambda L: L.ones((2,), dtype=L.int32), lambda L: L.full((2,), 7),
    lambda L: L.full((2,), 7.0), lambda L: L.full((1,), True), lambda L: L.arange(5),
    lambda L: L.arange(0, 1, 0.25), lambda L: L.arange(1, 10, 3), lambda L: L.linspace(0, 1, 5),
    lambda L: L.eye(3), lambda L: L.eye(2, 3), lambda L: L.FloatTensor([1, 2]),
    lambda L: L.DoubleTensor([1]), lambda L: L.LongTensor([1.7]), lambda L: L.IntTensor([3]),
    lambda L: L.BoolTensor([1, 0]), lambda L: L.FloatTensor(2, 3).zero_(),
    lambda L: L.zeros_like(L.ones(2, dtype=L.int16)), lambda L: L.ones_like(L.ones(2)),
    lambda L: L.full_like(L.ones(2), 3), lambda L: L.empty(2, 3).fill_(1),
    lambda L: L.from_numpy(np.ones(2, dtype=np.int32)), lambda L: L.as_tensor([1, 2.0]),
    lambda L: L.randint(0, 5, (3,)).zero_(), lambda L: L.randperm(4).sort()[0]
    if hasattr(L.Tensor, "sort") else L.arange(4),
])
def test_creation_matches_pytorch(make):
    e, t = make(ember), make(torch)
    assert repr(e) == repr(t)


def test_random_creation_shapes_dtypes_and_seeding():
    ember.manual_seed(3)
    a = ember.randn(2, 3)
    ember.manual_seed(3)
    assert ember.randn(2, 3).tolist() == a.tolist()
    assert a.dtype is ember.float32 and a.shape == (2, 3)
    r = ember.rand(1000)
    assert 0 <= r.min().item() if hasattr(r, "min") else True
    assert ((r >= 0) & (r < 1)).all()
    assert ember.randint(3, 7, (50,)).dtype is ember.int64
    assert sorted(ember.randperm(6).tolist()) == list(range(6))
    g = ember.Generator().manual_seed(1)
    assert ember.rand(3, generator=g).tolist() == ember.rand(3, generator=ember.Generator()
                                                             .manual_seed(1)).tolist()
    assert ember.initial_seed() == 3


def test_from_numpy_shares_memory_and_rejects_unsupported_types():
    arr = np.zeros(3, dtype=np.float32)
    t = ember.from_numpy(arr)
    arr[0] = 5
    t[1] = 7
    assert t.tolist() == [5.0, 7.0, 0.0] and arr[1] == 7
    with pytest.raises(TypeError, match="can't convert np.ndarray of type numpy.uint16"):
        ember.from_numpy(np.zeros(2, dtype=np.uint16))


@needs_torch
def test_tensor_from_tensor_warns_like_pytorch():
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.tensor(lib.ones(2))
        assert len(w) == 1 and str(w[0].message).startswith("To copy construct from a tensor")


@needs_torch
def test_conversions_and_protocols_match_pytorch():
    def probe(L):
        x = L.tensor([[1.5, -2.0], [3.0, 4.25]])
        s = L.tensor(-36.0)
        i = L.tensor(7)
        return [
            x.shape, x.size(), x.size(-1), x.dim(), x.ndim, x.numel(), x.dtype, x.device,
            x.tolist(), s.item(), f"{s}", f"{s:.2f}", f"{i}", float(s), int(s), bool(s),
            [5, 6, 7, 8][i - 4], len(x), [r.tolist() for r in x], x.float().dtype,
            x.double().dtype, x.long().tolist(), x.int().dtype, x.bool().tolist(),
            x.half().dtype, x.to(L.float64).dtype, x.type(), x.long().type(),
            x.type(L.int32).dtype, x.clone().tolist(), x.contiguous().is_contiguous(),
            x.t().is_contiguous(), x.element_size(), x.is_floating_point(), str(x.shape),
            repr(L.Size([2, 3])), L.Size([2, 3])[1:], x.cpu().device, x.is_leaf,
            x.requires_grad, x.grad_fn, np.asarray(x).tolist(), x.numpy().dtype,
            x.stride(), x.t().stride(), i.__index__(), x.T.tolist(), x.mT.shape,
        ]
    e, t = probe(ember), probe(torch)
    assert [str(v) for v in e] == [str(v) for v in t]


@needs_torch
def test_requires_grad_and_leaf_flags_match_pytorch():
    def probe(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        z = y.detach()
        w = L.ones(2)
        w.requires_grad = True
        with L.no_grad():
            n = x * 2
        return [(t.requires_grad, t.is_leaf, type(t.grad_fn).__name__) for t in (x, y, z, w, n)]
    assert probe(ember) == probe(torch)


BAD = {
    "broadcast": lambda L: L.ones(2) + L.ones(3),
    "broadcast_3d": lambda L: L.ones(2, 3) * L.ones(4, 1, 2),
    "inplace_broadcast": lambda L: L.ones(3).add_(L.ones(2, 3)),
    "inplace_cast": lambda L: L.ones(3, dtype=L.long).add_(1.5),
    "copy_shape": lambda L: L.zeros(3)[1:2].copy_(L.ones(2)),
    "view_size": lambda L: L.ones(3).view(2, 2),
    "view_two_minus_one": lambda L: L.ones(2, 3).view(-1, -1),
    "view_stride": lambda L: L.ones(2, 2).t().view(4),
    "too_many_indices": lambda L: L.ones(3)[0, 0],
    "index_out_of_range": lambda L: L.ones(3)[5],
    "list_index_out_of_range": lambda L: L.ones(3)[[0, 5]],
    "negative_step": lambda L: L.ones(3)[::-1],
    "sum_dim": lambda L: L.ones(2, 3).sum(3),
    "mean_dim": lambda L: L.ones(3).mean(dim=1),
    "mean_int": lambda L: L.ones(3, dtype=L.long).mean(),
    "mm_shapes": lambda L: L.ones(2, 3) @ L.ones(2, 3),
    "mv_shapes": lambda L: L.ones(2, 3) @ L.ones(4),
    "dot_shapes": lambda L: L.ones(3) @ L.ones(4),
    "matmul_0d": lambda L: L.tensor(1.0) @ L.ones(2),
    "item": lambda L: L.tensor([1.0, 2.0]).item(),
    "int": lambda L: int(L.ones(2)),
    "bool": lambda L: bool(L.ones(2)),
    "len_0d": lambda L: len(L.tensor(1.0)),
    "iter_0d": lambda L: iter(L.tensor(1.0)),
    "numpy_requires_grad": lambda L: L.ones(2, requires_grad=True).numpy(),
    "bce_shapes": lambda L: L.nn.functional.binary_cross_entropy_with_logits(L.ones(3),
                                                                            L.ones(2)),
    "bce_reduction": lambda L: L.nn.functional.binary_cross_entropy_with_logits(
        L.ones(3), L.ones(3), reduction="avg"),
    "negative_size": lambda L: L.zeros(2, -1),
    "grad_wrong_shape": lambda L: setattr(L.ones(2, requires_grad=True), "grad", L.ones(3)),
    "grad_wrong_dtype": lambda L: setattr(L.ones(2, requires_grad=True), "grad",
                                          L.ones(2, dtype=L.float64)),
    "device_string": lambda L: L.device("gpu"),
}


@needs_torch
@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_raises_pytorchs_error(name):
    got, want = raised(BAD[name], ember), raised(BAD[name], torch)
    assert want is not None
    assert got == want


def test_failed_in_place_ops_leave_tensors_unchanged():
    x = ember.tensor([1.0, 2.0, 3.0])
    for bad in (lambda: x.add_(ember.ones(2, 3)), lambda: x.add_(ember.ones(2))):
        with pytest.raises(RuntimeError):
            bad()
        assert x.tolist() == [1.0, 2.0, 3.0] and x._version == 0
    i = ember.tensor([1, 2])
    with pytest.raises(RuntimeError):
        i.mul_(1.5)
    assert i.tolist() == [1, 2] and i._version == 0
    leaf = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError):
        leaf.mul_(2)
    assert leaf.tolist() == [1.0, 1.0] and leaf.grad is None and leaf._version == 0


def test_failed_backward_leaves_grads_unchanged():
    x = ember.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    for bad in (lambda: (x * 3).backward(), lambda: (x * 3).backward(ember.ones(2))):
        with pytest.raises(RuntimeError):
            bad()
        assert x.grad.tolist() == [2.0, 2.0, 2.0]


@needs_torch
def test_device_objects_match_pytorch():
    for spec in ["cpu", "cuda", "cuda:1"]:
        assert repr(ember.device(spec)) == repr(torch.device(spec))
        assert str(ember.device(spec)) == str(torch.device(spec))
    assert ember.device("cpu") == "cpu"
    assert ember.cuda.is_available() in (True, False)


@pytest.mark.parametrize("shape", [(0, 3), (2, 0, 3), (0,), (3, 0)])
def test_stride_of_empty_tensors_matches_pytorch(torch, shape):
    assert ember.empty(*shape).stride() == torch.empty(*shape).stride()


def test_masked_select_on_0d_tensors_matches_pytorch(torch):
    def run(lib):
        x = lib.tensor(3.0, requires_grad=True)
        picked = [lib.masked_select(x, lib.tensor(True)), lib.masked_select(x, lib.tensor(False))]
        picked[0].sum().backward()
        return [repr(p) for p in picked], x.grad.item()
    assert run(ember) == run(torch)
