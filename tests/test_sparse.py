"""Sparse COO basics (``ember/sparse``) against PyTorch: construction, printing, coalescing,
conversions, ``torch.sparse.mm``/``sum`` and gradients through the values (also by finite
differences); every other use of a sparse tensor raises NotImplementedError."""
import warnings

import numpy as np
import pytest

import ember

from .oracle import assert_same, same_error

IDX = [[0, 1, 1, 0], [2, 0, 2, 2]]  # (0, 2) stored twice


def scenario(torch):
    i = torch.tensor(IDX)
    v = torch.tensor([3., 4., 5., 1.])
    s = torch.sparse_coo_tensor(i, v, (2, 3))
    c = s.coalesce()
    d = torch.tensor([[0., 2], [3, 0]])
    hybrid = torch.sparse_coo_tensor(torch.tensor([[0, 1]]), torch.ones(2, 2), (3, 2))
    return [repr(s), repr(s.double().requires_grad_()), repr(hybrid), repr(d.to_sparse()),
            s.is_coalesced(), c.is_coalesced(), str(s.layout), s.is_sparse, s.sparse_dim(),
            s.dense_dim(), s._nnz(), c._nnz(), tuple(s.shape), str(s.dtype), s._indices(),
            c.indices(), c.values(), s.to_dense(), d.to_sparse().to_dense(), hybrid.to_dense(),
            tuple(torch.sparse_coo_tensor(i, v).shape), torch.sparse.sum(s),
            torch.sparse.sum(s, 1).to_dense(), torch.sparse.sum(s, (0, 1)),
            torch.sparse.mm(s, torch.ones(3, 2)), s @ torch.ones(3, 2), (s + s).to_dense(),
            (s * 2).to_dense(), (2 * s).to_dense(), s.t().to_dense(), (-s).to_dense(),
            torch.sparse.mm(s, s.t()).to_dense(), torch.spmm(s, torch.ones(3, 2))]


def test_same_as_pytorch(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's invariant-check notice)
        assert_same(scenario(ember), scenario(torch))


def gradients(torch):
    i = torch.tensor(IDX)
    out = []
    x = torch.tensor([3., 4., 5., 1.], dtype=torch.float64, requires_grad=True)
    dense = torch.arange(6., dtype=torch.float64).reshape(3, 2).requires_grad_()
    (torch.sparse.mm(torch.sparse_coo_tensor(i, x, (2, 3)), dense) ** 2).sum().backward()
    out += [x.grad, dense.grad]
    x.grad = None
    (torch.sparse_coo_tensor(i, x, (2, 3)).to_dense() ** 2).sum().backward()
    out.append(x.grad)
    x.grad = None
    weights = torch.arange(6., dtype=torch.float64).reshape(2, 3)
    (torch.sparse_coo_tensor(i, x, (2, 3)).coalesce().to_dense() * weights).sum().backward()
    out.append(x.grad)
    w = torch.tensor([[0., 2], [3, 0]], dtype=torch.float64, requires_grad=True)
    (w.to_sparse().to_dense() * 3).sum().backward()
    out.append(w.grad)
    leaf = torch.sparse_coo_tensor(i, torch.tensor([3., 4., 5., 1.]), (2, 3),
                                   requires_grad=True)
    torch.sparse.sum(leaf).backward()
    out += [leaf.grad.indices(), leaf.grad.values()]
    return out


def test_gradients_as_pytorch(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(gradients(ember), gradients(torch))


def test_gradients_by_finite_differences():
    i = ember.tensor(IDX)
    dense = ember.tensor(np.random.default_rng(0).normal(size=(3, 2)), requires_grad=True)
    x = ember.tensor([3., 4., 5., 1.], dtype=ember.float64, requires_grad=True)

    def f(x, dense):
        s = ember.sparse_coo_tensor(i, x, (2, 3)).coalesce()
        return ember.sparse.mm(s, dense).sin() + s.to_dense().sum()
    assert ember.autograd.gradcheck(f, (x, dense))
    assert ember.autograd.gradgradcheck(f, (x, dense))


def test_errors_as_pytorch(torch):
    same_error(lambda lib: lib.sparse_coo_tensor(lib.tensor(IDX), lib.ones(4), (2, 3))
               .indices(), torch)
    same_error(lambda lib: lib.sparse_coo_tensor(lib.tensor([[0, 5]]), lib.ones(2), (3,),
                                                 check_invariants=True), torch)


@pytest.mark.parametrize("use", ["dense + s", "s.sum()", "torch.mm(d, s)", "torch.exp",
                                 "np.asarray", "s.to(float64)", "d @ s"])
def test_anything_else_is_refused(use):
    s = ember.sparse_coo_tensor([[0, 1], [1, 0]], [1., 2.], (2, 2))
    d = ember.ones(2, 2)
    run = {"dense + s": lambda: d + s, "s.sum()": lambda: s.sum(),
           "torch.mm(d, s)": lambda: ember.mm(d, s), "torch.exp": lambda: ember.exp(s),
           "np.asarray": lambda: np.asarray(s), "s.to(float64)": lambda: s.to(ember.float64),
           "d @ s": lambda: d @ s}[use]
    with pytest.raises((NotImplementedError, TypeError)):
        run()


@pytest.mark.parametrize("use", ["1-d", "rows", "dtype", "dtype long", "dtype of s"])
def test_mm_checks_as_pytorch(torch, use):
    def run(lib):
        s = lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor([3., 4., 5., 1.]), (2, 3))
        dense = {"1-d": lib.ones(3), "rows": lib.ones(2, 2), "dtype": lib.ones(3, 2).double(),
                 "dtype long": lib.ones(3, 1, dtype=lib.int64)}.get(use, lib.ones(3, 1))
        return lib.sparse.mm(s.double() if use == "dtype of s" else s, dense)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(run, torch)


def test_matrix_at_vector_as_pytorch(torch):
    def run(lib):
        x = lib.tensor([1., -2., 0.5], requires_grad=True)
        s = lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor([3., 4., 5., 1.]), (2, 3))
        y = s @ x
        (y * lib.tensor([1., 3.])).sum().backward()
        return [y, x.grad]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(run(ember), run(torch))


@pytest.mark.parametrize("call", ["mm", "matmul matrix", "matmul vector", "method"])
def test_sparse_first_operand_of_mm_and_matmul_as_pytorch(torch, call):
    """torch.mm / torch.matmul with a sparse COO first operand are sparse @ dense."""
    def run(lib):
        s = lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor([3., 4., 5., 1.]), (2, 3))
        d = lib.arange(6.0).reshape(3, 2)
        return {"mm": lambda: lib.mm(s, d), "matmul matrix": lambda: lib.matmul(s, d),
                "matmul vector": lambda: lib.matmul(s, lib.ones(3)),
                "method": lambda: s.matmul(d) if lib is torch else s @ d}[call]()
    np.testing.assert_allclose(run(ember).numpy(), run(torch).numpy())
