"""Complex ``slogdet``/``logdet``: the sign's gradient (it moves with A), ``logdet``'s complex
value, first and second derivatives, against PyTorch (ember's ``gradcheck`` takes real inputs
only)."""
import numpy as np
import pytest

import ember

LOSSES = {
    "logabsdet": lambda lib, s, la, A: la.sum(),
    "sign_real": lambda lib, s, la, A: s.real.sum(),
    "sign_imag": lambda lib, s, la, A: s.imag.sum(),
    "both": lambda lib, s, la, A: (s * lib.tensor([0.3 - 0.7j, 1j], dtype=A.dtype)).real.sum()
    + 0.4 * la.sum(),
    "logdet": lambda lib, s, la, A: (lib.logdet(A) * (0.2 + 0.5j)).real.sum(),
}


def _matrices(lib, dtype):
    rng = np.random.default_rng(3)
    a = rng.normal(size=(2, 3, 3)) + 1j * rng.normal(size=(2, 3, 3))
    return lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_gradient_matches_pytorch(torch, loss, dtype):
    grads = []
    for lib in (ember, torch):
        A = _matrices(lib, dtype)
        s, la = lib.linalg.slogdet(A)
        grads.append(lib.autograd.grad(LOSSES[loss](lib, s, la, A), A)[0].detach().numpy())
    tol = 1e-12 if dtype == "complex128" else 1e-4
    np.testing.assert_allclose(grads[0], grads[1], rtol=tol, atol=tol)


@pytest.mark.parametrize("loss", ["sign_imag", "both", "logdet"])
def test_second_derivative_matches_pytorch(torch, loss):
    out = []
    for lib in (ember, torch):
        A = _matrices(lib, "complex128")
        s, la = lib.linalg.slogdet(A)
        (g,) = lib.autograd.grad(LOSSES[loss](lib, s, la, A), A, create_graph=True)
        out.append(lib.autograd.grad((g * g.conj()).real.sum(), A)[0].detach().numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-10, atol=1e-12)


def test_complex_logdet_is_complex_as_pytorch(torch):
    e = ember.logdet(_matrices(ember, "complex128"))
    t = torch.logdet(_matrices(torch, "complex128"))
    assert str(e.dtype) == str(t.dtype)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-13)
