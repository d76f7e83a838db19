"""Single-precision transforms run in single precision (``ops/fft.py``'s ``_transform``:
NumPy's Python layer would pick its double-precision loop for the unit scale): every kind,
norm and length parity against PyTorch and against NumPy in double precision, float32 and
complex64 in and out, with gradients."""
import numpy as np
import pytest

import ember

from ..conftest import to_np

NORMS = [None, "backward", "ortho", "forward"]
CALLS = {
    "fft": lambda L, x, norm: L.fft.fft(x, norm=norm),
    "ifft": lambda L, x, norm: L.fft.ifft(x, norm=norm),
    "fft_real": lambda L, x, norm: L.fft.fft(x.real, norm=norm),
    "rfft": lambda L, x, norm: L.fft.rfft(x.real, norm=norm),
    "irfft": lambda L, x, norm: L.fft.irfft(x, norm=norm),
    "irfft_odd": lambda L, x, norm: L.fft.irfft(x, n=2 * x.shape[-1] - 1, norm=norm),
    "hfft": lambda L, x, norm: L.fft.hfft(x, norm=norm),
    "fft2": lambda L, x, norm: L.fft.fft2(x, norm=norm),
    "ifftn": lambda L, x, norm: L.fft.ifftn(x, dim=(0, 1), norm=norm),
    "rfftn": lambda L, x, norm: L.fft.rfftn(x.real, norm=norm),
    "irfftn": lambda L, x, norm: L.fft.irfftn(x, s=(6, 9), norm=norm),
}


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", list(CALLS))
@pytest.mark.parametrize("n", [16, 15])
def test_single_precision_matches_pytorch_and_double(torch, name, norm, n):
    rng = np.random.default_rng(n)
    z = rng.standard_normal((6, n)) + 1j * rng.standard_normal((6, n))
    call = CALLS[name]
    got = call(ember, ember.tensor(z.astype(np.complex64)), norm)
    want = call(torch, torch.tensor(z.astype(np.complex64)), norm)
    exact = to_np(call(ember, ember.tensor(z), norm))
    assert str(got.dtype).replace("ember", "torch") == str(want.dtype)
    assert str(got.dtype).split(".")[-1] in ("float32", "complex64")
    scale = np.abs(exact).max()
    np.testing.assert_allclose(to_np(got), to_np(want), atol=2e-6 * scale, rtol=0)
    np.testing.assert_allclose(to_np(got), exact, atol=2e-6 * scale, rtol=0)


@pytest.mark.parametrize("name", list(CALLS))
def test_single_precision_gradients_match_pytorch(torch, name):
    rng = np.random.default_rng(0)
    z = (rng.standard_normal((5, 8)) + 1j * rng.standard_normal((5, 8))).astype(np.complex64)
    shape = tuple(CALLS[name](ember, ember.tensor(z), "backward").shape)
    w = rng.standard_normal(shape + (2,)).astype(np.float32)
    grads = []
    for lib in (ember, torch):
        x = lib.tensor(z, requires_grad=True)
        out = CALLS[name](lib, x, "backward")
        parts = lib.view_as_real(out.resolve_conj()) if out.is_complex() else out[..., None]
        (parts * lib.tensor(w[..., :parts.shape[-1]])).sum().backward()
        grads.append(to_np(x.grad.resolve_conj()))
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-5 * np.abs(grads[1]).max())


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [17, 53, 83, 97, 101, 16])
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_prime_lengths_by_matrix_product(torch, n, dim, norm):
    """Prime lengths from 17 to 100 are transformed as products with the DFT matrix (see
    ``_DFT_PRIMES``), forward and inverse, along any dim, non-contiguous input included;
    101 (pocketfft) and 16 beside them."""
    rng = np.random.default_rng(n + dim)
    shape = [3, 4, 5]
    shape[dim] = n
    z = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    for kind in ("fft", "ifft", "fft2_strided"):
        def call(L, x):
            if kind == "fft2_strided":  # the prime length now at dim 2 - dim
                return L.fft.fft2(x.transpose(0, 2), dim=(2 - dim, 1 if dim != 1 else 0),
                                  norm=norm)
            return getattr(L.fft, kind)(x, dim=dim, norm=norm)
        got = call(ember, ember.tensor(z.astype(np.complex64)))
        want = call(torch, torch.tensor(z.astype(np.complex64)))
        exact = to_np(call(ember, ember.tensor(z)))
        assert got.dtype == ember.complex64
        scale = np.abs(exact).max()
        np.testing.assert_allclose(to_np(got), to_np(want), atol=2e-6 * scale, rtol=0)
        np.testing.assert_allclose(to_np(got), exact, atol=2e-6 * scale, rtol=0)


@pytest.mark.parametrize("n", [17, 83])
def test_prime_length_gradients_match_pytorch(torch, n):
    rng = np.random.default_rng(n)
    z = (rng.standard_normal((4, n)) + 1j * rng.standard_normal((4, n))).astype(np.complex64)
    w = rng.standard_normal((n, 4, 2)).astype(np.float32)
    grads = []
    for lib in (ember, torch):
        x = lib.tensor(z, requires_grad=True)
        out = lib.view_as_real(lib.fft.fft2(x.mT, norm="ortho"))
        (out * lib.tensor(w)).sum().backward()
        grads.append(to_np(x.grad.resolve_conj()))
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-5 * np.abs(grads[1]).max())
