"""Generators, seeds and states, and the random factories (``rand``, ``randn``, ``randint``,
``randperm`` and their ``*_like``) against PyTorch.

ember's streams are not PyTorch's (NumPy's PCG64 against a Mersenne Twister), so values are
checked statistically and for reproducibility; shapes, dtypes, overloads and errors (type and
whole message) are compared with PyTorch's.
"""
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember

from . import oracle


def outcome(lib, fn):
    """What ``fn(lib)`` gives: a tensor's shape, dtype and requires_grad, or the exception's
    type and whole message."""
    r = oracle.outcome(fn, lib, quiet=True)
    if isinstance(r, lib.Tensor):
        return tuple(r.shape), str(r.dtype), r.requires_grad
    return r


def same_as_torch(torch, fn):
    assert outcome(ember, fn) == outcome(torch, fn)


# --------------------------------------------------------------------------- Generator


def test_a_fresh_generator_starts_from_pytorchs_default_seed(torch):
    assert ember.Generator().initial_seed() == torch.Generator().initial_seed()
    assert repr(ember.Generator().device) == repr(torch.Generator().device)
    assert repr(ember.Generator(device=ember.device("cpu")).device) == "device(type='cpu')"


SEEDS = {
    "negative": lambda L: L.Generator().manual_seed(-1).initial_seed(),
    "most_negative": lambda L: L.Generator().manual_seed(-2 ** 63).initial_seed(),
    "largest": lambda L: L.Generator().manual_seed(2 ** 64 - 1).initial_seed(),
    "too_large": lambda L: L.Generator().manual_seed(2 ** 64),
    "too_negative": lambda L: L.Generator().manual_seed(-2 ** 63 - 1),
    "float": lambda L: L.Generator().manual_seed(1.5),
    "str": lambda L: L.Generator().manual_seed("3"),
    "bool": lambda L: L.Generator().manual_seed(True),
    "tensor": lambda L: L.Generator().manual_seed(L.tensor(3)),
    "numpy_int": lambda L: L.Generator().manual_seed(np.int64(5)),
    "module_numpy_int": lambda L: L.manual_seed(np.int64(5)).initial_seed(),
    "returns_self": lambda L: (lambda g: g.manual_seed(3) is g)(L.Generator()),
    "module_float": lambda L: L.manual_seed(1.5).initial_seed(),
    "module_str": lambda L: L.manual_seed("7").initial_seed(),
    "module_negative": lambda L: L.random.manual_seed(-1).initial_seed(),
    "module_too_large": lambda L: L.manual_seed(2 ** 64),
    "set_state_list": lambda L: L.Generator().set_state([1, 2]),
    "set_state_float": lambda L: L.Generator().set_state(L.zeros(10)),
    "set_rng_state_list": lambda L: L.set_rng_state([1, 2]),
}


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_seeding_and_state_arguments_like_pytorch(torch, name):
    try:
        same_as_torch(torch, SEEDS[name])
    finally:
        torch.seed()
        ember.seed()


def test_manual_seed_makes_draws_reproducible():
    g = ember.Generator().manual_seed(123)
    a = ember.rand(5, generator=g)
    b = ember.rand(5, generator=ember.Generator().manual_seed(123))
    assert ember.equal(a, b)
    ember.manual_seed(9)
    x = (ember.rand(3), ember.randn(3), ember.randint(10, (3,)), ember.randperm(5))
    ember.manual_seed(9)
    y = (ember.rand(3), ember.randn(3), ember.randint(10, (3,)), ember.randperm(5))
    assert all(ember.equal(p, q) for p, q in zip(x, y))


def test_a_generator_argument_leaves_the_default_generator_alone():
    ember.manual_seed(4)
    expected = ember.rand(3)
    ember.manual_seed(4)
    g = ember.Generator().manual_seed(4)
    for fn in (lambda: ember.rand(3, generator=g), lambda: ember.randn(3, generator=g),
               lambda: ember.randint(5, (3,), generator=g),
               lambda: ember.randperm(4, generator=g),
               lambda: ember.multinomial(ember.ones(3), 2, generator=g),
               lambda: ember.normal(0.0, 1.0, (2,), generator=g),
               lambda: ember.zeros(2).normal_(generator=g)):
        fn()
    assert ember.equal(ember.rand(3), expected)


def test_state_round_trip_restores_the_stream_and_the_seed():
    g = ember.Generator().manual_seed(5)
    ember.randn(7, generator=g)
    state = g.get_state()
    assert state.dtype is ember.uint8 and state.shape == (ember._random.STATE_SIZE,)
    a = ember.rand(4, generator=g)
    g.manual_seed(11)
    assert g.set_state(state) is g
    assert g.initial_seed() == 5
    assert ember.equal(ember.rand(4, generator=g), a)
    twin = g.clone_state()
    assert twin is not g and ember.equal(ember.rand(3, generator=twin), ember.rand(3, generator=g))


def test_module_state_functions_act_on_the_default_generator():
    state = ember.get_rng_state()
    a = ember.rand(3)
    ember.set_rng_state(state)
    assert ember.equal(ember.rand(3), a)
    ember.random.set_rng_state(state)
    assert ember.equal(ember.random.get_rng_state(), state)
    assert ember.random.default_generator is ember.default_generator


def test_a_pytorch_state_or_a_damaged_one_is_refused_with_a_clear_error(torch):
    size = ember._random.STATE_SIZE
    foreign = ember.tensor(torch.get_rng_state().numpy())
    with pytest.raises(RuntimeError) as info:
        ember.Generator().set_state(foreign)
    assert str(info.value) == (
        f"Expected an ember generator state of size {size} but found the input RNG state size "
        "to be 5056 (ember's states are its own format: a state saved by PyTorch cannot be "
        "restored in ember, nor the reverse)")
    with pytest.raises(RuntimeError, match="does not start with ember's format tag"):
        ember.Generator().set_state(ember.zeros(size, dtype=ember.uint8))
    with pytest.raises(TypeError, match="^RNG state must be a torch.ByteTensor$"):
        ember.set_rng_state(ember.zeros(size))


def test_fork_rng_restores_the_default_generator():
    ember.manual_seed(1)
    expected = ember.rand(2)
    ember.manual_seed(1)
    with ember.random.fork_rng():
        ember.rand(10)
    assert ember.equal(ember.rand(2), expected)
    ember.manual_seed(1)
    with pytest.raises(ValueError), ember.random.fork_rng(devices=[]):
        ember.rand(10)
        raise ValueError
    assert ember.equal(ember.rand(2), expected)
    ember.manual_seed(1)
    with ember.random.fork_rng(enabled=False):
        ember.rand(10)
    assert not ember.equal(ember.rand(2), expected)


def test_seed_returns_a_new_64_bit_seed():
    s = ember.seed()
    assert 0 <= s < 2 ** 64 and ember.initial_seed() == s
    g = ember.Generator()
    assert g.seed() == g.initial_seed() != 67280421310721


def test_generators_pickle_with_their_state():
    import pickle
    g = ember.Generator().manual_seed(8)
    ember.rand(3, generator=g)
    twin = pickle.loads(pickle.dumps(g))
    assert ember.equal(ember.rand(5, generator=twin), ember.rand(5, generator=g))


SCRIPT = "import ember; print(ember.initial_seed(), ember.rand(4).tolist())"


@pytest.mark.slow
def test_each_process_seeds_its_default_generator_from_the_os():
    runs = [subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                           check=True).stdout for _ in range(2)]
    assert runs[0] != runs[1]
    seeded = "import ember; ember.manual_seed(0); print(ember.rand(4).tolist())"
    runs = [subprocess.run([sys.executable, "-c", seeded], capture_output=True, text=True,
                           check=True).stdout for _ in range(2)]
    assert runs[0] == runs[1]


# --------------------------------------------------------------------------- factories

CALLS = {
    # randint's overloads, keywords and bad arguments
    "high_size": lambda L: L.randint(10, (3,)),
    "high_size_kw": lambda L: L.randint(10, size=(3,)),
    "low_high_size": lambda L: L.randint(3, 10, (2, 3)),
    "all_keywords": lambda L: L.randint(low=3, high=10, size=(2, 3)),
    "high_keyword": lambda L: L.randint(high=10, size=(2,)),
    "low_positional_high_keyword": lambda L: L.randint(3, high=10, size=(2,)),
    "torch_size": lambda L: L.randint(10, L.Size([3])),
    "list_size": lambda L: L.randint(10, [3, 2]),
    "empty_size": lambda L: L.randint(10, ()),
    "zero_size": lambda L: L.randint(10, (0, 3)),
    "tensor_bound": lambda L: L.randint(L.tensor(5), (3,)),
    "float_dtype": lambda L: L.randint(10, (3,), dtype=L.float32),
    "float_dtype_grad": lambda L: L.randint(10, (3,), dtype=L.float32, requires_grad=True),
    "int_grad": lambda L: L.randint(10, (3,), requires_grad=True),
    "generator": lambda L: L.randint(10, (3,), generator=L.Generator()),
    "device": lambda L: L.randint(10, (3,), device="cpu"),
    "no_size": lambda L: L.randint(10),
    "nothing": lambda L: L.randint(),
    "size_only": lambda L: L.randint(size=(3,)),
    "int_size": lambda L: L.randint(10, 3),
    "three_ints": lambda L: L.randint(3, 10, 2),
    "four_args": lambda L: L.randint(3, 10, (2,), 5),
    "float_high": lambda L: L.randint(1.5, (3,)),
    "float_low_high": lambda L: L.randint(0.5, 7.5, (3,)),
    "int_float": lambda L: L.randint(0, 1.5, (3,)),
    "empty_range": lambda L: L.randint(5, 5, (3,)),
    "zero_high": lambda L: L.randint(0, (3,)),
    "negative_size": lambda L: L.randint(10, (-1,)),
    "overflow": lambda L: L.randint(2 ** 63, (3,)),
    "int64_range": lambda L: L.randint(-2 ** 63, 2 ** 63 - 1, (3,)),
    "bad_generator": lambda L: L.randint(10, (3,), generator=5),
    "bool_dtype": lambda L: L.randint(2, (3,), dtype=L.bool),
    "bool_too_high": lambda L: L.randint(10, (3,), dtype=L.bool),
    "uint8_too_high": lambda L: L.randint(300, (3,), dtype=L.uint8),
    "uint8_negative": lambda L: L.randint(-1, 5, (3,), dtype=L.uint8),
    "half_too_high": lambda L: L.randint(100000, (3,), dtype=L.float16),
    "complex": lambda L: L.randint(10, (3,), dtype=L.complex64),
    "out": lambda L: L.randint(10, (3,), out=L.empty(3, dtype=L.int64)),
    "out_float": lambda L: L.randint(10, (3,), out=L.empty(3)),
    "out_resized": lambda L: L.randint(2, 10, (3,), out=L.empty(2, dtype=L.int32)),
    "out_dtype_mismatch": lambda L: L.randint(10, (3,), out=L.empty(3), dtype=L.int64),
    # randint_like
    "like_high": lambda L: L.randint_like(L.zeros(2, 3), 10),
    "like_low_high": lambda L: L.randint_like(L.zeros(2, 3), 3, 10),
    "like_keywords": lambda L: L.randint_like(L.zeros(2, 3), low=3, high=10),
    "like_high_keyword": lambda L: L.randint_like(L.zeros(2, 3), high=10),
    "like_tensor_high": lambda L: L.randint_like(L.zeros(2, 3), L.tensor(5)),
    "like_vector_high": lambda L: L.randint_like(L.zeros(3), L.tensor([1, 5, 10])),
    "like_int_input": lambda L: L.randint_like(L.zeros(2, 3, dtype=L.int32), 10),
    "like_dtype": lambda L: L.randint_like(L.zeros(2), 10, dtype=L.int64),
    "like_generator": lambda L: L.randint_like(L.zeros(2), 10, generator=L.Generator()),
    "like_grad": lambda L: L.randint_like(L.zeros(2), 10, requires_grad=True),
    "like_no_bound": lambda L: L.randint_like(L.zeros(2, 3)),
    "like_float_bound": lambda L: L.randint_like(L.zeros(2, 3), 1.5),
    "like_three_bounds": lambda L: L.randint_like(L.zeros(2, 3), 5, 10, 15),
    "like_list": lambda L: L.randint_like([1, 2], 10),
    "like_uint8_too_high": lambda L: L.randint_like(L.zeros(2, dtype=L.uint8), 300),
    # rand, randn, randperm and their generator= and out=
    "rand_generator": lambda L: L.rand(2, 3, generator=L.Generator()),
    "rand_bad_generator": lambda L: L.rand(3, generator=3),
    "randn_bad_generator": lambda L: L.randn(3, generator=3),
    "randperm_bad_generator": lambda L: L.randperm(3, generator=3),
    "rand_like_bad_generator": lambda L: L.rand_like(L.zeros(2), generator=3),
    "randn_like_bad_generator": lambda L: L.randn_like(L.zeros(2), generator=3),
    "rand_like_generator": lambda L: L.rand_like(L.zeros(2, 3), generator=L.Generator()),
    "randn_like_generator": lambda L: L.randn_like(L.zeros(2, 3), generator=L.Generator()),
    "rand_out": lambda L: L.rand(3, out=L.empty(5)),
    "randn_out_generator": lambda L: L.randn(3, out=L.empty(3), generator=L.Generator()),
    "randperm_out": lambda L: L.randperm(3, out=L.empty(5, dtype=L.int64)),
    "randperm_out_float": lambda L: L.randperm(3, out=L.empty(3)),
    "randperm_out_dtype": lambda L: L.randperm(3, out=L.empty(3), dtype=L.int64),
    "randperm_float": lambda L: L.randperm(3.5),
    "randperm_negative": lambda L: L.randperm(-3),
    "rand_complex": lambda L: L.rand(2, dtype=L.complex64),
    "randn_complex": lambda L: L.randn(2, dtype=L.complex128),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_factories_like_pytorch(torch, name):
    same_as_torch(torch, CALLS[name])


def test_out_of_a_random_factory_holds_the_draw(torch):
    out = ember.empty(5, dtype=ember.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PyTorch's random factories resize out silently
        r = ember.randint(3, 7, (4,), out=out)
    assert r is out and out.shape == (4,) and ((out >= 3) & (out < 7)).all()
    g = ember.Generator().manual_seed(2)
    assert ember.equal(ember.randperm(6, out=ember.empty(6, dtype=ember.int64), generator=g),
                       ember.randperm(6, generator=ember.Generator().manual_seed(2)))


def test_randint_is_uniform_on_its_range():
    g = ember.Generator().manual_seed(0)
    x = ember.randint(-3, 4, (70000,), generator=g).numpy()
    counts = np.bincount(x + 3, minlength=7)
    assert x.min() == -3 and x.max() == 3
    chi2 = ((counts - 10000) ** 2 / 10000).sum()
    assert chi2 < 40  # 6 degrees of freedom: 40 is far in the tail
    like = ember.randint_like(ember.zeros(20000, dtype=ember.int8), 5, generator=g)
    assert like.dtype is ember.int8 and set(like.tolist()) == {0, 1, 2, 3, 4}


def test_complex_draws_fill_both_parts_as_pytorch():
    g = ember.Generator().manual_seed(1)
    z = ember.randn(100000, dtype=ember.complex128, generator=g).numpy()
    assert abs(z.real.var() - 0.5) < 0.02 and abs(z.imag.var() - 0.5) < 0.02
    u = ember.rand(100000, dtype=ember.complex64, generator=g).numpy()
    for part in (u.real, u.imag):
        assert part.min() >= 0 and part.max() < 1 and abs(part.mean() - 0.5) < 0.01
    w = ember.zeros(100000, dtype=ember.complex128).normal_(1.0, 2.0, generator=g).numpy()
    assert abs(w.real.mean() - 1) < 0.03 and abs(w.imag.mean()) < 0.03
    assert abs(w.real.var() - 2) < 0.1 and abs(w.imag.var() - 2) < 0.1
    v = ember.zeros(100000, dtype=ember.complex64).uniform_(-1, 3, generator=g).numpy()
    assert v.imag.min() >= -1 and v.imag.max() < 3 and abs(v.imag.mean() - 1) < 0.03


FILLS = {
    "normal_bad_generator": lambda L: L.zeros(3).normal_(generator=2),
    "uniform_bad_generator": lambda L: L.zeros(3).uniform_(generator=2),
    "exponential_bad_generator": lambda L: L.zeros(3).exponential_(generator=2),
    "geometric_bad_generator": lambda L: L.zeros(3).geometric_(0.5, generator=2),
    "log_normal_bad_generator": lambda L: L.zeros(3).log_normal_(generator=2),
    "cauchy_bad_generator": lambda L: L.zeros(3).cauchy_(generator=2),
    "random_bad_generator": lambda L: L.zeros(3).random_(generator=2),
    "bernoulli_bad_generator": lambda L: L.zeros(3).bernoulli_(generator=2),
    "complex_exponential": lambda L: L.zeros(3, dtype=L.complex64).exponential_(),
    "complex_log_normal": lambda L: L.zeros(3, dtype=L.complex64).log_normal_(),
    "complex_cauchy": lambda L: L.zeros(3, dtype=L.complex64).cauchy_(),
    "complex_geometric": lambda L: L.zeros(3, dtype=L.complex64).geometric_(0.5),
    "complex_bernoulli": lambda L: L.zeros(3, dtype=L.complex64).bernoulli_(0.5),
    "complex_random": lambda L: L.zeros(3, dtype=L.complex64).random_(3),
    "uniform_inf_from": lambda L: L.zeros(3).uniform_(-float("inf"), 0),
    "uniform_inf_to": lambda L: L.zeros(3, dtype=L.float64).uniform_(0, float("inf")),
    "uniform_nan": lambda L: L.zeros(3).uniform_(float("nan"), 1),
    "uniform_beyond_float": lambda L: L.zeros(3).uniform_(0, 1e39),
    "uniform_range_overflow": lambda L: L.zeros(3).uniform_(-3e38, 3e38),
    "normal_nan_std": lambda L: L.zeros(3).normal_(0, float("nan")),
    "exponential_nan": lambda L: L.zeros(3).exponential_(float("nan")),
    "geometric_nan": lambda L: L.zeros(3).geometric_(float("nan")),
    "cauchy_nan": lambda L: L.zeros(3).cauchy_(0, float("nan")),
    "log_normal_nan": lambda L: L.zeros(3).log_normal_(0, float("nan")),
    "bernoulli_nan": lambda L: L.zeros(3).bernoulli_(float("nan")),
}


@pytest.mark.parametrize("name", sorted(FILLS))
def test_in_place_fills_refuse_like_pytorch(torch, name):
    same_as_torch(torch, FILLS[name])


CUDA_RANDOM = {
    "manual_seed": lambda L: L.cuda.manual_seed(0),
    "manual_seed_all": lambda L: L.cuda.manual_seed_all(0),
    "seed": lambda L: L.cuda.seed(),
    "seed_all": lambda L: L.cuda.seed_all(),
    "get_rng_state_all": lambda L: L.cuda.get_rng_state_all(),
    "get_rng_state": lambda L: L.cuda.get_rng_state(),
    "initial_seed": lambda L: L.cuda.random.initial_seed(),
    "set_rng_state_all": lambda L: L.cuda.set_rng_state_all([]),
}


@pytest.mark.skipif(ember.cuda.is_available(), reason="compares with a CPU-only PyTorch")
@pytest.mark.parametrize("name", sorted(CUDA_RANDOM))
def test_cuda_random_functions_without_a_gpu_like_pytorch(torch, name):
    if torch.cuda.is_available():
        pytest.skip("compares with a CPU-only PyTorch")
    state = ember.get_rng_state()
    same_as_torch(torch, CUDA_RANDOM[name])
    assert ember.equal(ember.get_rng_state(), state)  # the CPU generator is left alone


@pytest.mark.parametrize("name, top", [("float16", 1 - 2.0 ** -11), ("bfloat16", 1 - 2.0 ** -8),
                                       ("float32", 1 - 2.0 ** -24)])
def test_rand_stays_below_one_in_low_precision(name, top):
    """[0, 1) in the dtype itself: a float64 draw rounded to float16 reached 1.0 (PyTorch's
    never does); the draws are multiples of 2**-bits, so the largest is 1 - 2**-bits."""
    if name == "bfloat16":
        pytest.importorskip("ml_dtypes")
    ember.manual_seed(0)
    x = ember.rand(2 * 10 ** 6, dtype=getattr(ember, name)).float()
    assert x.max().item() <= top < 1.0 and x.min().item() >= 0.0
    assert abs(x.mean().item() - top / 2) < 2e-3
