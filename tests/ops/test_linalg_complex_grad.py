"""Gradients of linear algebra on complex matrices: the holomorphic functions (and slogdet,
the norms) match PyTorch; the decompositions whose rules are written for real matrices refuse
complex input loudly rather than return a plausible wrong gradient."""
import numpy as np
import pytest

import ember

_rng = np.random.default_rng(0)
A0 = _rng.normal(size=(3, 3)) + 1j * _rng.normal(size=(3, 3))
B0 = _rng.normal(size=(3, 2)) + 1j * _rng.normal(size=(3, 2))
W0 = _rng.normal(size=(3, 3)) + 1j * _rng.normal(size=(3, 3))

MATCH = {
    "inv": lambda L, A, B: L.linalg.inv(A),
    "det": lambda L, A, B: L.linalg.det(A),
    "solve": lambda L, A, B: L.linalg.solve(A, B),
    "solve_triangular": lambda L, A, B: L.linalg.solve_triangular(A.triu() + 3 * L.eye(3), B,
                                                                  upper=True),
    "matrix_power_neg": lambda L, A, B: L.linalg.matrix_power(A, -2),
    "slogdet": lambda L, A, B: L.linalg.slogdet(A)[1],
    "matrix_norm_fro": lambda L, A, B: L.linalg.matrix_norm(A),
    "vector_norm": lambda L, A, B: L.linalg.vector_norm(A),
    "lu_factor": lambda L, A, B: L.linalg.lu_factor(A)[0],
    "lu": lambda L, A, B: L.linalg.lu(A)[2],
    "eigvals": lambda L, A, B: L.linalg.eigvals(A),
    "tensorinv": lambda L, A, B: L.linalg.tensorinv(A, 1),
    "tensorsolve": lambda L, A, B: L.linalg.tensorsolve(A, B[:, 0]),
    "inv_ex": lambda L, A, B: L.linalg.inv_ex(A)[0],
    "solve_ex": lambda L, A, B: L.linalg.solve_ex(A, B)[0],
    "vander": lambda L, A, B: L.linalg.vander(A[0]),
    "matrix_exp": lambda L, A, B: L.linalg.matrix_exp(A),
}
REFUSED = {
    "cholesky": lambda L, A: L.linalg.cholesky(A @ A.mH + 3 * L.eye(3)),
    "eigh": lambda L, A: L.linalg.eigh(A + A.mH)[0],
    "svd": lambda L, A: L.linalg.svd(A)[1],
    "svdvals": lambda L, A: L.linalg.svdvals(A),
    "qr": lambda L, A: L.linalg.qr(A)[1],
    "pinv": lambda L, A: L.linalg.pinv(A),
    "matrix_norm_nuc": lambda L, A: L.linalg.matrix_norm(A, "nuc"),
    "cholesky_ex": lambda L, A: L.linalg.cholesky_ex(A @ A.mH + 3 * L.eye(3))[0],
    "cond": lambda L, A: L.linalg.cond(A),
    "lu_solve": lambda L, A: L.linalg.lu_solve(*L.linalg.lu_factor(A), A[:, :2]),
    "lstsq": lambda L, A: L.linalg.lstsq(A, A[:, :2]).solution,
    "householder_product": lambda L, A: L.linalg.householder_product(A, A[:, 0]),
}


def _loss(L, y):
    W = L.tensor(np.resize(W0, y.shape) if y.is_complex() else np.resize(W0.real, y.shape))
    return (y * W).real.sum() if y.is_complex() else (y * W).sum()


@pytest.mark.parametrize("name", sorted(MATCH))
def test_gradient_matches_pytorch(torch, name):
    grads = []
    for L in (ember, torch):
        A, B = L.tensor(A0, requires_grad=True), L.tensor(B0, requires_grad=True)
        gA, gB = L.autograd.grad(_loss(L, MATCH[name](L, A, B)), [A, B], allow_unused=True)
        grads.append([None if g is None else g.detach().numpy() for g in (gA, gB)])
    for e, t in zip(*grads):
        assert (e is None) == (t is None)
        if e is not None:
            np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_for_complex_input(name):
    A = ember.tensor(A0, requires_grad=True)
    y = REFUSED[name](ember, A)
    with pytest.raises(NotImplementedError, match="for complex input is not implemented"):
        _loss(ember, y).backward()
    assert A.grad is None


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_real_input_still_differentiates(name):
    A = ember.tensor(A0.real, requires_grad=True)
    _loss(ember, REFUSED[name](ember, A)).backward()
    assert A.grad is not None and bool(ember.isfinite(A.grad).all())


def test_abs_forward_mode_of_complex_input(torch):
    """|z| is not holomorphic: its tangent is Re(conj(sgn z) t), as PyTorch's."""
    x = [1 + 2j, -3 + 0.5j, 0j]
    t = [0.3 - 0.1j, 1j, 1 + 1j]
    tangents = []
    for lib, fwd in ((ember, ember.autograd.forward_ad), (torch, torch.autograd.forward_ad)):
        with fwd.dual_level():
            d = fwd.make_dual(lib.tensor(x), lib.tensor(t))
            tangents.append(fwd.unpack_dual(d.abs()).tangent.numpy())
    np.testing.assert_allclose(tangents[0], tangents[1], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_classification_of_complex_values(torch, name):
    values = [complex("nan+0j"), complex("nan+nanj"), 1 + 1j, complex("inf+1j"),
              complex("1-infj"), complex("0+nanj"), complex("nan+infj")]
    e = getattr(ember, name)(ember.tensor(values)).tolist()
    assert e == getattr(torch, name)(torch.tensor(values)).tolist()


@pytest.mark.parametrize("name", ["isposinf", "isneginf"])
def test_signed_infinity_tests_refuse_complex(torch, name):
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match=f"{name} does not support complex inputs."):
            getattr(lib, name)(lib.tensor([1j]))
