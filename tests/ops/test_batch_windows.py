"""A language model's data loading, ``torch.stack([data[i:i + T] for i in ix])``: the lone
slice with 0-d tensor bounds, integer index arithmetic on 0-d tensors and ``stack`` of
same-shaped tensors take short paths; each must give what the general paths give (and what
PyTorch gives)."""
import numpy as np
import pytest

import ember


def _both(torch, fn):
    return fn(ember), fn(torch)


def _same(e, t):
    assert e.dtype.__repr__().split(".")[-1] == repr(t.dtype).split(".")[-1]
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_array_equal(e.numpy(), t.detach().numpy())


def test_windows_batch_matches_pytorch(torch):
    def batch(lib):
        data = lib.tensor(np.arange(1000) % 65)
        ix = lib.tensor([3, 0, 991, 500])
        x = lib.stack([data[i:i + 8] for i in ix])
        y = lib.stack([data[i + 1:i + 8 + 1] for i in ix])
        return lib.cat([x, y])
    _same(*_both(torch, batch))


@pytest.mark.parametrize("key", [(2, 5), (-4, None), (None, -2), (5, 100), (7, 3), (1, 9, 3),
                                 (0, None)])
def test_lone_slice_with_tensor_bounds(torch, key):
    def sliced(lib):
        data = lib.arange(10)
        bounds = [None if k is None else lib.tensor(k) for k in key]
        return data[slice(*bounds)]
    _same(*_both(torch, sliced))


def test_lone_slice_is_a_view_that_writes_through():
    data = ember.arange(10)
    w = data[ember.tensor(2):ember.tensor(5)]
    w[0] = 100
    assert data[2].item() == 100
    assert w._base is data


def test_lone_slice_errors_as_pytorch(torch):
    for lib in (ember, torch):
        with pytest.raises(IndexError, match="slice\\(\\) cannot be applied to a 0-dim tensor"):
            lib.tensor(1.0)[0:1]
        with pytest.raises(ValueError, match="step must be greater than zero"):
            lib.arange(4)[::-1]


def test_lone_slice_gradient(torch):
    def grad(lib):
        x = lib.arange(6.0, dtype=lib.float64).requires_grad_()
        weights = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
        (x[lib.tensor(1):lib.tensor(4)] * weights).sum().backward()
        return x.grad
    _same(*_both(torch, grad))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("number", [8, -1, 127, 200, 70000])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "radd"])
def test_int_tensor_with_int(torch, dtype, number, op):
    def compute(lib):
        i = lib.tensor([5, 3], dtype=getattr(lib, dtype))[0]
        return {"add": lambda: i + number, "sub": lambda: i - number,
                "mul": lambda: i * number, "radd": lambda: number + i}[op]()
    _same(*_both(torch, compute))


def test_bool_tensor_with_int_promotes(torch):
    _same(*_both(torch, lambda lib: lib.tensor([True, False]) + 3))


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
def test_stack_of_alike_tensors(torch, dim, dtype):
    def stacked(lib):
        rows = [lib.tensor(np.arange(6).reshape(2, 3) + k, dtype=getattr(lib, dtype))
                for k in range(4)]
        return lib.stack(rows, dim=dim)
    _same(*_both(torch, stacked))


def test_stack_of_mixed_dtypes_promotes(torch):
    _same(*_both(torch, lambda lib: lib.stack([lib.tensor([1, 2]), lib.tensor([0.5, 1.5])])))


def test_stack_fast_path_gradients(torch):
    def grads(lib):
        rows = [lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
                for _ in range(3)]
        out = lib.stack(rows)
        (out * lib.arange(9.0, dtype=lib.float64).reshape(3, 3)).sum().backward()
        return lib.stack([r.grad for r in rows])
    _same(*_both(torch, grads))
