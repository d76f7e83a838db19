"""Sampling ops (``ember/_sampling.py``): ``normal``, ``bernoulli``, ``poisson``,
``multinomial`` against PyTorch.

- ``SPECS``: each sampling node (``NormalBackward1/2/3``, ``BernoulliBackward0``,
  ``PoissonBackward0``) with degenerate draws (std 0, p 1, rate 0), so values are
  deterministic and the zero gradients PyTorch gives a sample are compared with PyTorch's.
- Overloads, shapes, dtypes and errors (type and whole message) against PyTorch.
- Distributions: frequencies and moments from fixed seeds, with generous tolerances (a
  chi-square statistic far in the tail; moments within many standard errors).
"""
import itertools

import numpy as np
import pytest

import ember

from .. import oracle
from ..opspec import BINARY_SHAPES, UNARY_SHAPES, Spec, op_tests

U, B = UNARY_SHAPES, BINARY_SHAPES

SPECS = [
    # finite differences would see the mean pass through (std 0): PyTorch's derivative of a
    # sample is zero all the same, which the comparison with PyTorch checks
    Spec("normal_tensor_tensor", lambda L, a, b: L.normal(a, b * 0) * a, B,
         finite_differences=False),
    Spec("normal_tensor_float", lambda L, a: L.normal(a, 0.0) * a, U, finite_differences=False),
    Spec("normal_float_tensor", lambda L, b: L.normal(1.5, b * 0) * b, U,
         finite_differences=False),
    Spec("bernoulli", lambda L, a: L.bernoulli(a * 0 + 1) * a, U),
    Spec("poisson", lambda L, a: L.poisson(a * 0) + a, U),
]

test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)


def outcome(lib, fn):
    r = oracle.outcome(fn, lib, quiet=True)
    if isinstance(r, lib.Tensor):
        return (tuple(r.shape), str(r.dtype), r.requires_grad,
                type(r.grad_fn).__name__ if r.grad_fn else None)
    return r


P = [0.1, 0.2, 0.7]
CALLS = {
    # normal: the four overloads, keywords, dtypes, out= and errors
    "nn": lambda L: L.normal(L.zeros(2, 3), L.ones(2, 3)),
    "nn_broadcast": lambda L: L.normal(L.zeros(3), L.ones(2, 3)),
    "nn_mismatch": lambda L: L.normal(L.zeros(2, 3), L.ones(6)),
    "nf": lambda L: L.normal(L.zeros(2, 3), 2.0),
    "n_default_std": lambda L: L.normal(L.zeros(2, 3)),
    "fn": lambda L: L.normal(1.0, L.ones(2, 3)),
    "ffs": lambda L: L.normal(2.0, 3.0, (2, 3)),
    "ffs_ints": lambda L: L.normal(2, 3, (2, 3)),
    "ffs_keywords": lambda L: L.normal(mean=1.0, std=2.0, size=(2,)),
    "ffs_dtype": lambda L: L.normal(2.0, 3.0, (2,), dtype=L.float64),
    "ffs_int_dtype": lambda L: L.normal(2.0, 3.0, (2,), dtype=L.int64),
    "ffs_complex": lambda L: L.normal(1.0, 2.0, (2,), dtype=L.complex64),
    "ffs_grad": lambda L: L.normal(2.0, 3.0, (2,), requires_grad=True),
    "ffs_generator": lambda L: L.normal(2.0, 3.0, (2,), generator=L.Generator()),
    "ffs_scalar_tensors": lambda L: L.normal(L.tensor(1.0), L.tensor(3.0), (2,)),
    "ffs_int_size": lambda L: L.normal(1.0, 2.0, 2),
    "ff": lambda L: L.normal(2.0, 3.0),
    "f": lambda L: L.normal(2.0),
    "keywords": lambda L: L.normal(mean=L.zeros(2), std=L.ones(2)),
    "mean_keyword": lambda L: L.normal(mean=L.zeros(2)),
    "negative_std": lambda L: L.normal(2.0, -3.0, (2,)),
    "negative_std_nf": lambda L: L.normal(L.zeros(2), -1.0),
    "nan_std": lambda L: L.normal(L.zeros(2), float("nan")),
    "inf_std": lambda L: L.normal(L.zeros(2), float("inf")),
    "negative_std_tensor": lambda L: L.normal(L.zeros(2), L.tensor([1.0, -1.0])),
    "nan_std_tensor": lambda L: L.normal(L.zeros(2), L.tensor([1.0, float("nan")])),
    "negative_std_fn": lambda L: L.normal(1.0, -L.ones(2)),
    "complex_std": lambda L: L.normal(L.zeros(2), L.ones(2, dtype=L.complex64)),
    "complex_mean": lambda L: L.normal(L.zeros(2, dtype=L.complex64), L.ones(2)),
    "int_mean": lambda L: L.normal(L.zeros(2, dtype=L.int64), L.ones(2)),
    "int_std_fn": lambda L: L.normal(1.0, L.ones(2, dtype=L.int64)),
    "int_std_nn": lambda L: L.normal(L.zeros(2), L.ones(2, dtype=L.int64)),
    "double_mean": lambda L: L.normal(L.zeros(2, dtype=L.float64), L.ones(2)),
    "double_std": lambda L: L.normal(L.zeros(2), L.ones(2, dtype=L.float64)),
    "double_std_fn": lambda L: L.normal(1.0, L.ones(2, dtype=L.float64)),
    "half_mean": lambda L: L.normal(L.zeros(2, dtype=L.float16), 1.0),
    "empty": lambda L: L.normal(L.zeros(0), L.ones(0)),
    "scalar": lambda L: L.normal(L.zeros(()), L.ones(())),
    "grad_mean": lambda L: L.normal(L.zeros(2, requires_grad=True), L.ones(2)),
    "grad_std": lambda L: L.normal(L.zeros(2), L.ones(2, requires_grad=True)),
    "grad_nf": lambda L: L.normal(L.zeros(2, requires_grad=True), 1.0),
    "grad_fn": lambda L: L.normal(1.0, L.ones(2, requires_grad=True)),
    "bad_generator": lambda L: L.normal(L.zeros(2), L.ones(2), generator=1),
    "out": lambda L: L.normal(L.zeros(2), L.ones(2), out=L.empty(2)),
    "out_double": lambda L: L.normal(L.zeros(2), 1.0, out=L.empty(2, dtype=L.float64)),
    "out_long": lambda L: L.normal(L.zeros(2), L.ones(2), out=L.empty(2, dtype=L.int64)),
    "out_grad": lambda L: L.normal(L.zeros(2, requires_grad=True), L.ones(2), out=L.empty(2)),
    "out_ffs": lambda L: L.normal(1.0, 2.0, (2,), out=L.empty(5)),
    "out_ffs_long": lambda L: L.normal(1.0, 2.0, (2,), out=L.empty(2, dtype=L.int64)),
    "out_ffs_dtype": lambda L: L.normal(1.0, 2.0, (2,), out=L.empty(2), dtype=L.float64),
    # multinomial
    "m": lambda L: L.multinomial(L.tensor(P), 2),
    "m_all": lambda L: L.multinomial(L.tensor(P), 3),
    "m_too_many": lambda L: L.multinomial(L.tensor(P), 4),
    "m_replacement": lambda L: L.multinomial(L.tensor(P), 4, True),
    "m_replacement_kw": lambda L: L.multinomial(L.tensor(P), 4, replacement=True),
    "m_zero": lambda L: L.multinomial(L.tensor(P), 0),
    "m_negative": lambda L: L.multinomial(L.tensor(P), -1),
    "m_float_n": lambda L: L.multinomial(L.tensor(P), 1.5),
    "m_generator": lambda L: L.multinomial(L.tensor(P), 2, generator=L.Generator()),
    "m_bad_generator": lambda L: L.multinomial(L.tensor(P), 2, generator=3),
    "m_int_replacement": lambda L: L.multinomial(L.tensor(P), 2, 1),
    "m_none_replacement": lambda L: L.multinomial(L.tensor(P), 2, None),
    "m_list": lambda L: L.multinomial([0.5, 0.5], 1),
    "m_few_nonzero": lambda L: L.multinomial(L.tensor([0.1, 0.0, 0.0]), 2),
    "m_all_zero": lambda L: L.multinomial(L.tensor([0.0, 0.0]), 1),
    "m_all_zero_replacement": lambda L: L.multinomial(L.tensor([0.0, 0.0]), 1, True),
    "m_negative_weight": lambda L: L.multinomial(L.tensor([0.1, -0.2, 0.7]), 1),
    "m_inf": lambda L: L.multinomial(L.tensor([0.1, float("inf")]), 1, True),
    "m_nan": lambda L: L.multinomial(L.tensor([0.1, float("nan")]), 1),
    "m_negative_replacement": lambda L: L.multinomial(L.tensor([0.1, -0.2, 0.7]), 2, True),
    "m_nan_replacement": lambda L: L.multinomial(L.tensor([0.1, float("nan")]), 2, True),
    "m_inf_replacement": lambda L: L.multinomial(L.tensor([0.1, float("inf")]), 2, True),
    "m_rows_in_order": lambda L: L.multinomial(L.tensor([[0.0, 0.0], [1.0, -1.0]]), 2, True),
    "m_rows_bad_later": lambda L: L.multinomial(L.tensor([[1.0, -1.0], [0.0, 0.0]]), 2, True),
    "m_inf_then_negative": lambda L: L.multinomial(L.tensor([float("inf"), -1.0]), 2, True),
    "m_2d": lambda L: L.multinomial(L.tensor([[0.1, 0.2], [0.3, 0.4]]), 2),
    "m_2d_zero_row": lambda L: L.multinomial(L.tensor([[0.1, 0.2], [0.0, 0.0]]), 1, True),
    "m_3d": lambda L: L.multinomial(L.zeros(2, 2, 2), 1),
    "m_0d": lambda L: L.multinomial(L.tensor(0.5), 1),
    "m_no_categories": lambda L: L.multinomial(L.zeros(0), 1),
    "m_no_rows": lambda L: L.multinomial(L.zeros(0, 3), 1),
    "m_long": lambda L: L.multinomial(L.tensor([1, 2, 3]), 1),
    "m_bool": lambda L: L.multinomial(L.tensor([True, False]), 1),
    "m_long_zero": lambda L: L.multinomial(L.tensor([1, 2]), 0),
    "m_3d_zero": lambda L: L.multinomial(L.zeros(2, 2, 2), 0),
    "m_nan_too_many": lambda L: L.multinomial(L.tensor([1.0, float("nan")]), 3),
    "m_double": lambda L: L.multinomial(L.tensor(P, dtype=L.float64), 2),
    "m_half": lambda L: L.multinomial(L.tensor(P, dtype=L.float16), 2),
    "m_grad": lambda L: L.multinomial(L.tensor(P, requires_grad=True), 2),
    "m_out": lambda L: L.multinomial(L.tensor(P), 2, out=L.empty(5, dtype=L.int64)),
    "m_out_int": lambda L: L.multinomial(L.tensor(P), 2, out=L.empty(2, dtype=L.int32)),
    "m_out_float_first": lambda L: L.multinomial(L.tensor([[1.0]]), 3, out=L.empty(2)),
    "m_too_many_categories": lambda L: L.multinomial(L.ones(1, 2 ** 24 + 1), 1),
    "m_method": lambda L: L.tensor(P).multinomial(2),
    "m_method_keywords": lambda L: L.tensor(P).multinomial(num_samples=2, replacement=False),
    "m_method_generator": lambda L: L.tensor(P).multinomial(4, True, generator=L.Generator()),
    "m_missing": lambda L: L.multinomial(L.ones(2)),
    "m_method_missing": lambda L: L.ones(2).multinomial(),
    "normal_nothing": lambda L: L.normal(),
    "bernoulli_nothing": lambda L: L.bernoulli(),
    "poisson_nothing": lambda L: L.poisson(),
    "m_method_float_n": lambda L: L.tensor(P).multinomial(1.5),
    # bernoulli
    "b": lambda L: L.bernoulli(L.tensor([0.1, 0.5])),
    "b_p": lambda L: L.bernoulli(L.tensor([0.1, 0.5]), 0.3),
    "b_p_keyword": lambda L: L.bernoulli(L.tensor([0.1, 0.5]), p=0.3),
    "b_above_one": lambda L: L.bernoulli(L.tensor([0.1, 1.5])),
    "b_negative": lambda L: L.bernoulli(L.tensor([0.1, -0.5])),
    "b_nan": lambda L: L.bernoulli(L.tensor([0.1, float("nan")])),
    "b_p_above_one": lambda L: L.bernoulli(L.tensor([0.1, 0.5]), 1.5),
    "b_long": lambda L: L.bernoulli(L.tensor([1, 0])),
    "b_long_p": lambda L: L.bernoulli(L.tensor([1, 0]), 0.5),
    "b_bool": lambda L: L.bernoulli(L.tensor([True, False])),
    "b_double": lambda L: L.bernoulli(L.tensor([0.1, 0.5], dtype=L.float64)),
    "b_grad": lambda L: L.bernoulli(L.tensor([0.1, 0.5], requires_grad=True)),
    "b_grad_p": lambda L: L.bernoulli(L.tensor([0.1, 0.5], requires_grad=True), 0.5),
    "b_generator": lambda L: L.bernoulli(L.tensor([0.1, 0.5]), generator=L.Generator()),
    "b_bad_generator": lambda L: L.bernoulli(L.tensor([0.1, 0.5]), generator=3),
    "b_out": lambda L: L.bernoulli(L.tensor([0.1, 0.5]), out=L.empty(3)),
    "b_out_long": lambda L: L.bernoulli(L.tensor([0.1, 0.5]), out=L.empty(2, dtype=L.int64)),
    "b_out_p": lambda L: L.bernoulli(L.tensor([0.1, 0.5]), 0.5, out=L.empty(2)),
    "b_number": lambda L: L.bernoulli(0.5),
    "b_method": lambda L: L.tensor([0.1, 0.5]).bernoulli(),
    "b_method_p": lambda L: L.tensor([0.1, 0.5]).bernoulli(0.3),
    "b_method_p_keyword": lambda L: L.tensor([0.1, 0.5]).bernoulli(p=0.3),
    "b_method_generator": lambda L: L.tensor([0.1, 0.5]).bernoulli(generator=L.Generator()),
    "b_method_above_one": lambda L: L.tensor([0.1, 1.5]).bernoulli(),
    # poisson
    "p": lambda L: L.poisson(L.tensor([1.0, 2.0])),
    "p_generator": lambda L: L.poisson(L.tensor([1.0, 2.0]), L.Generator()),
    "p_generator_keyword": lambda L: L.poisson(L.tensor([1.0]), generator=L.Generator()),
    "p_bad_generator": lambda L: L.poisson(L.tensor([1.0, 2.0]), generator=3),
    "p_negative": lambda L: L.poisson(L.tensor([1.0, -2.0])),
    "p_nan": lambda L: L.poisson(L.tensor([1.0, float("nan")])),
    "p_long": lambda L: L.poisson(L.tensor([1, 2])),
    "p_double": lambda L: L.poisson(L.tensor([1.0, 2.0], dtype=L.float64)),
    "p_half": lambda L: L.poisson(L.tensor([1.0, 2.0], dtype=L.float16)),
    "p_grad": lambda L: L.poisson(L.tensor([1.0, 2.0], requires_grad=True)),
    "p_out": lambda L: L.poisson(L.tensor([1.0, 2.0]), out=L.empty(2)),
    "p_number": lambda L: L.poisson(2.0),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_like_pytorch(torch, name):
    assert outcome(ember, CALLS[name]) == outcome(torch, CALLS[name])


def test_sampling_gradients_are_zero_as_pytorchs(torch):
    for lib in (ember, torch):
        mean = lib.tensor([0.0, 1.0], requires_grad=True)
        std = lib.tensor([1.0, 2.0], requires_grad=True)
        lib.normal(mean, std).sum().backward()
        lib.normal(mean, 2.0).sum().backward()
        lib.normal(3.0, std).sum().backward()
        lib.poisson(std).sum().backward()
        lib.bernoulli(std / 2).sum().backward()
        assert mean.grad.tolist() == [0.0, 0.0] and std.grad.tolist() == [0.0, 0.0]


def test_bernoulli_with_p_refuses_backward_as_pytorch(torch):
    def run(lib):
        y = lib.bernoulli(lib.tensor([0.2, 0.5], requires_grad=True), 0.5)
        return type(y.grad_fn).__name__, outcome(lib, lambda _: y.sum().backward())
    assert run(ember) == run(torch)


def test_out_of_normal_warns_when_resized_as_pytorch(torch):
    for lib in (ember, torch):
        out = lib.empty(5)
        with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
            lib.normal(lib.zeros(2), lib.ones(2), out=out)
        assert out.shape == (2,)


# --------------------------------------------------------------------------- distributions


def chi2(counts, probs):
    expected = np.asarray(probs) * counts.sum()
    return (((counts - expected) ** 2) / expected).sum()


def test_multinomial_with_replacement_follows_the_weights():
    g = ember.Generator().manual_seed(0)
    w = ember.tensor([1.0, 0.0, 2.0, 3.0, 4.0, 0.0])  # unnormalised, zero weights inside/last
    x = ember.multinomial(w, 50000, True, generator=g).numpy()
    counts = np.bincount(x, minlength=6)
    assert counts[1] == 0 and counts[5] == 0
    assert chi2(counts[[0, 2, 3, 4]], [0.1, 0.2, 0.3, 0.4]) < 30  # 3 dof


def test_multinomial_without_replacement_draws_in_sequence():
    """Ordered pairs drawn without replacement: P(i then j) = w_i/S * w_j/(S - w_i)."""
    g = ember.Generator().manual_seed(1)
    w = np.array([1.0, 2.0, 3.0, 4.0])
    rows = ember.tensor(np.tile(w, (40000, 1)))
    x = ember.multinomial(rows, 2, generator=g).numpy()
    assert (x[:, 0] != x[:, 1]).all()
    pairs = list(itertools.permutations(range(4), 2))
    counts = np.array([((x[:, 0] == i) & (x[:, 1] == j)).sum() for i, j in pairs])
    s = w.sum()
    probs = [w[i] / s * w[j] / (s - w[i]) for i, j in pairs]
    assert abs(sum(probs) - 1) < 1e-12
    assert chi2(counts, probs) < 50  # 11 dof


def test_multinomial_without_replacement_puts_zero_weights_last():
    g = ember.Generator().manual_seed(2)
    x = ember.multinomial(ember.tensor([[0.0, 5.0, 0.0, 1.0]] * 200), 4, generator=g).numpy()
    assert set(map(tuple, np.sort(x[:, 2:], axis=1))) == {(0, 2)}
    assert (np.sort(x, axis=1) == np.arange(4)).all()  # a permutation in each row
    single = ember.multinomial(ember.tensor([0.0, 0.0, 3.0]), 1, generator=g)
    assert single.tolist() == [2]


def test_normal_overloads_have_the_asked_moments():
    g = ember.Generator().manual_seed(3)
    n = 100000
    mean = ember.tensor([[-1.0], [2.0]])
    std = ember.tensor([0.5, 3.0])
    x = ember.normal(mean.expand(2, 2).repeat(1, n // 2).reshape(2, 2, -1).permute(0, 2, 1),
                     std, generator=g).numpy()
    assert x.shape == (2, n // 2, 2)
    for i, m in enumerate((-1.0, 2.0)):
        for j, s in enumerate((0.5, 3.0)):
            col = x[i, :, j]
            assert abs(col.mean() - m) < 6 * s / np.sqrt(col.size)
            assert abs(col.std() / s - 1) < 0.03
    y = ember.normal(ember.full((n,), 5.0), 2.0, generator=g).numpy()
    assert abs(y.mean() - 5) < 0.03 and abs(y.std() - 2) < 0.03
    z = ember.normal(-3.0, ember.full((n,), 0.5), generator=g).numpy()
    assert abs(z.mean() + 3) < 0.01 and abs(z.std() - 0.5) < 0.01
    w = ember.normal(1.0, 4.0, (n,), generator=g).numpy()
    assert abs(w.mean() - 1) < 0.06 and abs(w.std() - 4) < 0.06
    c = ember.normal(ember.zeros(n, dtype=ember.complex128), 2.0, generator=g).numpy()
    assert abs(c.real.var() - 2) < 0.05 and abs(c.imag.var() - 2) < 0.05


def test_bernoulli_and_poisson_have_the_asked_means():
    g = ember.Generator().manual_seed(4)
    p = ember.tensor([0.0, 0.1, 0.5, 0.9, 1.0]).repeat(20000)
    x = ember.bernoulli(p, generator=g).numpy().reshape(20000, 5)
    assert x[:, 0].sum() == 0 and x[:, 4].sum() == 20000
    assert np.allclose(x.mean(axis=0)[1:4], [0.1, 0.5, 0.9], atol=0.015)
    q = ember.bernoulli(ember.zeros(50000, dtype=ember.int64), 0.25, generator=g)
    assert q.dtype is ember.int64 and abs(q.double().mean().item() - 0.25) < 0.01
    m = ember.tensor([0.0, 0.5, 4.0, 100.0]).repeat(20000)
    y = ember.poisson(m, generator=g).numpy().reshape(20000, 4)
    assert (y[:, 0] == 0).all() and (y == np.round(y)).all()
    assert np.allclose(y.mean(axis=0), [0, 0.5, 4, 100], rtol=0.02, atol=0.02)
    assert np.allclose(y.var(axis=0), [0, 0.5, 4, 100], rtol=0.06, atol=0.02)


def test_poisson_refuses_rates_numpy_cannot_sample():
    with pytest.raises(RuntimeError, match="ember cannot sample rates above 1e"):
        ember.poisson(ember.tensor([1.0, float("inf")]))


VMAPPED = {
    "normal_nf": lambda L, m: L.normal(m, 1.0),
    "normal_nn": lambda L, m: L.normal(m, m.abs() + 1),
    "normal_fn": lambda L, m: L.normal(0.0, m.abs() + 1),
    "normal_sized": lambda L, m: L.normal(0.0, 1.0, (50,)) + m,
    "bernoulli": lambda L, m: L.bernoulli(m * 0 + 0.5),
    "poisson": lambda L, m: L.poisson(m.abs() + 3),
    "multinomial": lambda L, m: L.multinomial(m.abs() + 1, 20, True),
}


@pytest.mark.parametrize("name", sorted(VMAPPED))
@pytest.mark.parametrize("randomness", ["error", "same", "different"])
def test_under_vmap_like_pytorch(torch, name, randomness):
    fn = VMAPPED[name]

    def run(lib):
        return lib.vmap(lambda m: fn(lib, m), randomness=randomness)(lib.zeros(3, 50))
    assert outcome(ember, run) == outcome(torch, run)
    if randomness == "different":
        x = run(ember).double().numpy()
        assert (x[0] != x[1]).any() and (x[1] != x[2]).any()  # a draw per sample
