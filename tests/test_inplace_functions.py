"""``torch.X_(input, ...)``: PyTorch's in-place functions, each ``input.X_(...)``; and the
constants ``torch.e``, ``pi``, ``inf``, ``nan``."""
import math

import numpy as np
import pytest

import ember
from ember import _inplace_functions


def test_every_torch_inplace_function_with_an_ember_method_is_there(torch):
    """The sweep: each ``torch.X_`` whose method ``Tensor.X_`` ember has is ``ember.X_``."""
    names = {n for n in dir(torch) if n.endswith("_") and not n.startswith("_")}
    want = {n for n in names if hasattr(ember.Tensor, n)}
    assert want <= {n for n in names if hasattr(ember, n)}
    assert set(_inplace_functions.NAMES) <= names
    torch_functions = {n for n in names if callable(getattr(torch, n))
                       and hasattr(torch.Tensor, n)} - {"relu_"}  # (ember's relu_: its own)
    assert set(_inplace_functions.PYTORCH_NAMES) == torch_functions


CASES = [("exp_", ()), ("sqrt_", ()), ("clamp_", (-0.5, 0.5)), ("fill_", (2.5,)),
         ("zero_", ()), ("round_", ()), ("nan_to_num_", ()), ("xlogy_", (2.0,)),
         ("logit_", (0.1,)), ("sigmoid_", ()), ("trunc_", ())]


@pytest.mark.parametrize("name,args", CASES)
def test_writes_in_place_and_returns_input(torch, name, args):
    data = np.array([[0.25, -1.5, 3.0], [0.75, 2.0, -0.1]], dtype=np.float32)
    results = []
    for lib in (ember, torch):
        x = lib.tensor(data)
        out = getattr(lib, name)(x, *args)
        assert out is x and x._version == 1
        results.append(x.numpy())
    np.testing.assert_allclose(*results, rtol=1e-6)  # float32 exp: last-bit differences


def test_non_tensor_input_and_leaf_errors_match_torch(torch):
    for lib_args in ((3,), ([1.0],)):
        with pytest.raises(TypeError) as theirs:
            torch.exp_(*lib_args)
        with pytest.raises(TypeError) as ours:
            ember.exp_(*lib_args)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError) as theirs:
        torch.exp_(torch.ones(2, requires_grad=True))
    with pytest.raises(RuntimeError) as ours:
        ember.exp_(ember.ones(2, requires_grad=True))
    assert str(ours.value) == str(theirs.value)


def test_backward_through_an_inplace_function(torch):
    grads = []
    for lib in (ember, torch):
        a = lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = a * 2
        lib.sin_(y)
        y.sum().backward()
        assert type(y.grad_fn).__name__ == "SinBackward0"
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(*grads, rtol=1e-12)


def test_constants(torch):
    for name in ("e", "pi", "inf"):
        assert getattr(ember, name) == getattr(torch, name)
        assert type(getattr(ember, name)) is type(getattr(torch, name)) is float
    assert math.isnan(ember.nan) and type(ember.nan) is float
