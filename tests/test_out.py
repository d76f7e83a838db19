"""``out=``: the result written into the given tensor, which is returned — as PyTorch does,
its errors and its resize warning included (compared with PyTorch when it is installed)."""
import warnings

import numpy as np
import pytest

import ember

from .oracle import Raised, outcome

torch = pytest.importorskip("torch")

A = [[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]]
B = [[2.0, 0.5, -1.0], [3.0, -2.0, 0.25]]
INTS = [[1, 2, 3], [4, 5, 6]]

# name -> call(lib, out): every public function that takes out= in ember
CALLS = {
    "add": lambda lib, out: lib.add(lib.tensor(A), lib.tensor(B), alpha=2, out=out),
    "add ints": lambda lib, out: lib.add(lib.tensor(INTS), lib.tensor(INTS), out=out),
    "sub": lambda lib, out: lib.sub(lib.tensor(A), lib.tensor(B), out=out),
    "mul": lambda lib, out: lib.mul(lib.tensor(A), lib.tensor(B), out=out),
    "mul scalar": lambda lib, out: lib.mul(lib.tensor(A), 3, out=out),
    "div": lambda lib, out: lib.div(lib.tensor(A), lib.tensor(B), out=out),
    "div floor": lambda lib, out: lib.div(lib.tensor(INTS), 2, rounding_mode="floor", out=out),
    "cat": lambda lib, out: lib.cat([lib.tensor(A), lib.tensor(B)], 1, out=out),
    "stack": lambda lib, out: lib.stack([lib.tensor(A), lib.tensor(B)], out=out),
    "hstack": lambda lib, out: lib.hstack([lib.tensor(A), lib.tensor(B)], out=out),
    "vstack": lambda lib, out: lib.vstack([lib.tensor(A[0]), lib.tensor(B)], out=out),
    "dstack": lambda lib, out: lib.dstack([lib.tensor(A), lib.tensor(B)], out=out),
    "column_stack": lambda lib, out: lib.column_stack([lib.tensor(A[0]), lib.tensor(B[1])],
                                                      out=out),
    "gather": lambda lib, out: lib.gather(lib.tensor(A), 1, lib.tensor([[2, 0], [1, 1]]),
                                          out=out),
    "norm": lambda lib, out: lib.norm(lib.tensor(A), 2, 1, out=out),
    "normalize": lambda lib, out: lib.nn.functional.normalize(lib.tensor(A), out=out),
    "zeros": lambda lib, out: lib.zeros(2, 3, out=out),
    "ones": lambda lib, out: lib.ones(2, 3, out=out),
    "full": lambda lib, out: lib.full((2, 2), 1.5, out=out),
    "arange": lambda lib, out: lib.arange(1, 4, out=out),
    "linspace": lambda lib, out: lib.linspace(0, 1, 5, out=out),
    "eye": lambda lib, out: lib.eye(2, 3, out=out),
}
FACTORIES = ("zeros", "ones", "full", "arange", "linspace", "eye")


def _outcome(lib, name, out):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = outcome(CALLS[name], lib, out, exact_type=True)
    if isinstance(result, Raised):
        return None, result, _texts(caught)
    return result, None, _texts(caught)


def _texts(caught):
    return [str(w.message).split(" (Triggered internally")[0] for w in caught]


def _both(name, shape, dtype):
    """The outcome of ``name`` into an uninitialised ``out`` of ``shape`` in each library."""
    e_out = ember.zeros(*shape, dtype=getattr(ember, dtype))
    t_out = torch.zeros(*shape, dtype=getattr(torch, dtype))
    return (e_out, *_outcome(ember, name, e_out)), (t_out, *_outcome(torch, name, t_out))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("shape", [(0,), (2, 3), (7,)])  # empty; often right; wrong: resized
@pytest.mark.parametrize("name", sorted(CALLS))
def test_out_writes_like_pytorch(name, shape, dtype):
    (e_out, e_res, e_err, e_warn), (t_out, t_res, t_err, t_warn) = _both(name, shape, dtype)
    assert e_err == t_err
    assert e_warn == t_warn
    if t_err is not None:
        return
    assert e_res is e_out and t_res is t_out  # out itself comes back
    assert str(e_out.dtype) == str(t_out.dtype) and tuple(e_out.shape) == tuple(t_out.shape)
    np.testing.assert_allclose(e_out.numpy(), t_out.numpy(), rtol=1e-6)


def test_out_refuses_autograd_like_pytorch():
    for lib in (ember, torch):
        a = lib.tensor(A, requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            lib.mul(a, 2, out=lib.empty(0))
        assert str(e.value) == ("mul(): functions with out=... arguments don't support automatic "
                                "differentiation, but one of the arguments requires grad.")
        with pytest.raises(RuntimeError) as e:
            lib.arange(3.0, out=lib.empty(3, requires_grad=True))
        assert str(e.value).startswith("aten::arange(): functions with out=... arguments")
        with lib.no_grad():
            out = lib.empty(0)
            assert lib.mul(a, 2, out=out) is out and out.tolist() == (a * 2).tolist()


def test_out_checks_a_factorys_dtype_like_pytorch():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match=r"^dtype Float does not match dtype of out "
                                               r"parameter \(Long\)$"):
            lib.zeros(2, dtype=lib.float32, out=lib.empty(2, dtype=lib.int64))


@pytest.mark.parametrize("name", ["rand", "randn"])
def test_random_factories_fill_out(name):
    out = ember.full((4,), 9.0, dtype=ember.float64)
    version = out._version
    assert getattr(ember, name)(2, 3, out=out) is out
    assert tuple(out.shape) == (2, 3) and out.dtype == ember.float64
    assert (out != 9.0).all() and out._version > version


def test_out_bumps_the_version_and_keeps_views_of_a_same_shaped_out():
    out = ember.zeros(2, 3)
    row = out[0]
    version = out._version
    ember.add(ember.tensor(A), 1, out=out)
    assert out._version == version + 1
    assert row.tolist() == [2.5, -1.0, 4.0]  # written in place: a view sees it


@pytest.mark.parametrize("call", [
    lambda lib: lib.add(lib.ones(2), 1, out=[1]),
    lambda lib: lib.exp(lib.ones(2), out=3),
    lambda lib: lib.linalg.inv(lib.eye(2), out="a"),
    lambda lib: lib.zeros(2, out=[1]),
])
def test_out_of_another_type_is_refused_like_pytorch(call):
    errors = []
    for lib in (ember, torch):
        with pytest.raises(TypeError) as e:
            call(lib)
        errors.append(str(e.value))
    assert errors[0] == errors[1]
