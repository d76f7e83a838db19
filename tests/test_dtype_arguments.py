"""Python's scalar types as a ``dtype`` argument, against PyTorch: ``float`` is float64, ``int``
int64, ``bool`` bool and ``complex`` complex128 in every public function that takes a dtype
(all of them read it through ``ember._dtypes.as_dtype``)."""
import warnings

import numpy as np
import pytest

import ember

# name -> fn(lib, dtype): the creation functions, then the other functions that take a dtype.
CALLS = {
    "tensor": lambda L, d: L.tensor([1, 0, 2], dtype=d),
    "as_tensor": lambda L, d: L.as_tensor(np.zeros(2), dtype=d),
    "as_tensor(Tensor)": lambda L, d: L.as_tensor(L.ones(2), dtype=d),
    "asarray": lambda L, d: L.asarray(np.zeros(2), dtype=d),
    "scalar_tensor": lambda L, d: L.scalar_tensor(1, dtype=d),
    "zeros": lambda L, d: L.zeros(2, 3, dtype=d),
    "ones": lambda L, d: L.ones(2, dtype=d),
    "empty": lambda L, d: L.empty(2, dtype=d).zero_(),
    "full": lambda L, d: L.full((2,), 1, dtype=d),
    "zeros_like": lambda L, d: L.zeros_like(L.ones(2), dtype=d),
    "ones_like": lambda L, d: L.ones_like(L.ones(2), dtype=d),
    "full_like": lambda L, d: L.full_like(L.ones(2), 1, dtype=d),
    "empty_like": lambda L, d: L.empty_like(L.ones(2), dtype=d).zero_(),
    "empty_strided": lambda L, d: L.empty_strided((2,), (1,), dtype=d).zero_(),
    "eye": lambda L, d: L.eye(2, dtype=d),
    "arange": lambda L, d: L.arange(4, dtype=d),
    "linspace": lambda L, d: L.linspace(0, 3, 4, dtype=d),
    "logspace": lambda L, d: L.logspace(0, 2, 3, dtype=d),
    "frombuffer": lambda L, d: L.frombuffer(bytearray(16), dtype=d),
    "tril_indices": lambda L, d: L.tril_indices(3, 3, dtype=d),
    "triu_indices": lambda L, d: L.triu_indices(3, 4, 1, dtype=d),
    "hann_window": lambda L, d: L.hann_window(4, dtype=d),
    "kaiser_window": lambda L, d: L.kaiser_window(4, dtype=d),
    "randint": lambda L, d: L.randint(0, 1, (2,), dtype=d),
    "randperm": lambda L, d: L.randperm(1, dtype=d),
    "rand": lambda L, d: L.rand(2, dtype=d) * 0,
    "new_zeros": lambda L, d: L.ones(2).new_zeros(2, dtype=d),
    "fft.fftfreq": lambda L, d: L.fft.fftfreq(4, dtype=d),
    "fft.rfftfreq": lambda L, d: L.fft.rfftfreq(4, dtype=d),
    "sum": lambda L, d: L.sum(L.ones(2, 3), dtype=d),
    "Tensor.sum": lambda L, d: L.ones(2, 3).sum(1, dtype=d),
    "prod": lambda L, d: L.prod(L.ones(2, 3), 0, dtype=d),
    "nansum": lambda L, d: L.nansum(L.ones(2, 3), dtype=d),
    "mean": lambda L, d: L.mean(L.ones(2, 3), dtype=d),
    "nanmean": lambda L, d: L.nanmean(L.ones(2, 3), 1, dtype=d),
    "mean(int64)": lambda L, d: L.mean(L.ones(2, dtype=L.int64), dtype=d),
    "cumsum": lambda L, d: L.cumsum(L.ones(2, 3), 1, dtype=d),
    "cumprod": lambda L, d: L.ones(2, 3).cumprod(0, dtype=d),
    "softmax": lambda L, d: L.softmax(L.ones(2, 3), 1, dtype=d),
    "norm": lambda L, d: L.norm(L.ones(2, 3), dtype=d),
    "linalg.vector_norm": lambda L, d: L.linalg.vector_norm(L.ones(2, 3), dtype=d),
    "linalg.matrix_norm": lambda L, d: L.linalg.matrix_norm(L.ones(2, 3), dtype=d),
    "linalg.norm": lambda L, d: L.linalg.norm(L.ones(2, 3), dtype=d),
    "Tensor.view": lambda L, d: L.ones(2, 8).view(d),
    "Tensor.to": lambda L, d: L.ones(2).to(d),
}
# ember runs these where PyTorch has no kernel, whichever way the dtype is spelled
NO_KERNEL = {("cumsum", bool), ("cumprod", bool)}


def _outcome(fn, lib, d):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn(lib, d)
        except Exception as e:  # noqa: BLE001 - the same type and text is the point
            return type(e).__name__, str(e)
    return str(out.dtype), out.detach().cpu().numpy().tolist()


@pytest.mark.parametrize("d", [float, int, bool], ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", list(CALLS))
def test_python_type_as_dtype(torch, name, d):
    if (name, d) in NO_KERNEL:
        pytest.skip("ember has a kernel PyTorch lacks")
    fn = CALLS[name]
    assert _outcome(fn, ember, d) == _outcome(fn, torch, d)


@pytest.mark.parametrize("name", ["tensor", "zeros", "as_tensor", "sum", "cumsum", "arange"])
def test_complex_as_dtype(torch, name):
    fn = CALLS[name]
    assert _outcome(fn, ember, complex) == _outcome(fn, torch, complex)


def test_not_a_dtype_is_a_type_error():
    for fn in (lambda: ember.as_tensor(np.zeros(2), dtype="float"),
               lambda: ember.sum(ember.ones(2), dtype=3),
               lambda: ember.tril_indices(3, 3, dtype=np.int64)):
        with pytest.raises(TypeError, match="argument 'dtype' must be torch.dtype"):
            fn()
