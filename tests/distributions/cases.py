"""The distributions the table-driven tests build, with the parameters and values to use.

A case is ``Case(name, params, value, ...)``: ``params(rng, batch, dtype)`` returns the keyword
arguments as NumPy arrays (or Python numbers, passed as they are) for a batch shape ``batch``;
``value(rng, shape, dtype, params)`` returns points of the support of shape
``shape`` (``sample_shape + batch + event``) at which ``log_prob``/``cdf`` are compared;
``event`` is the event shape as a function of the parameters; ``make(lib, **kwargs)`` builds
the distribution in either library (``lib.distributions.<name>`` by default).
"""
from dataclasses import dataclass, field
from typing import Callable

import numpy as np


def pos(lo=0.5, hi=3.0):
    return lambda rng, shape, dtype: rng.uniform(lo, hi, shape).astype(dtype)


def real(scale=1.0):
    return lambda rng, shape, dtype: (scale * rng.standard_normal(shape)).astype(dtype)


def unit(lo=0.05, hi=0.95):
    return lambda rng, shape, dtype: rng.uniform(lo, hi, shape).astype(dtype)


def simplex_vec(k):
    def gen(rng, shape, dtype):
        x = rng.uniform(0.2, 1.0, shape + (k,))
        return (x / x.sum(-1, keepdims=True)).astype(dtype)
    return gen


def vec(gen, k):
    return lambda rng, shape, dtype: gen(rng, shape + (k,), dtype)


def number(v):
    return lambda rng, shape, dtype: v


def count(n):
    return lambda rng, shape, dtype: rng.integers(0, n + 1, shape).astype(dtype)


@dataclass
class Case:
    name: str
    params: dict  # name -> generator(rng, batch_shape, dtype)
    value: Callable  # (rng, shape, dtype, params) -> array
    event: tuple = ()
    make: Callable = None
    icdf: bool = False  # compare icdf on (0, 1)
    grad_params: tuple = None  # which parameters take gradients (default: float arrays)
    id: str = ""
    rtol: dict = field(default_factory=dict)  # float64 tolerances by property, where wider

    def build(self, lib, arrays):
        kwargs = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v
                  for k, v in arrays.items()}
        if self.make is not None:
            return self.make(lib, **kwargs)
        return getattr(lib.distributions, self.name)(**kwargs)


def within(lo, hi):
    return lambda rng, shape, dtype, p: rng.uniform(lo, hi, shape).astype(dtype)


def positive_values(rng, shape, dtype, p):
    return rng.uniform(0.1, 4.0, shape).astype(dtype)


def real_values(rng, shape, dtype, p):
    return (2 * rng.standard_normal(shape)).astype(dtype)


def unit_values(rng, shape, dtype, p):
    return rng.uniform(0.02, 0.98, shape).astype(dtype)


def simplex_values(rng, shape, dtype, p):
    x = rng.uniform(0.1, 1.0, shape)
    return (x / x.sum(-1, keepdims=True)).astype(dtype)


def bools(rng, shape, dtype, p):
    return rng.integers(0, 2, shape).astype(dtype)


def counts(n):
    return lambda rng, shape, dtype, p: rng.integers(0, n + 1, shape).astype(dtype)


def one_hots(rng, shape, dtype, p):
    k = shape[-1]
    return np.eye(k, dtype=dtype)[rng.integers(0, k, shape[:-1])]


def uniform_values(rng, shape, dtype, p):
    lo, hi = np.broadcast_arrays(p["low"], p["high"])
    lo, hi = np.broadcast_to(lo, shape), np.broadcast_to(hi, shape)
    return (lo + (hi - lo) * rng.uniform(0.01, 0.99, shape)).astype(dtype)


def above_scale(rng, shape, dtype, p):
    scale = np.broadcast_to(p["scale"], shape)
    return (scale * rng.uniform(1.01, 4.0, shape)).astype(dtype)


def multinomial_values(n, k):
    def gen(rng, shape, dtype, p):
        draws = rng.multinomial(n, np.full(k, 1.0 / k), size=shape[:-1])
        return draws.astype(dtype)
    return gen


# PyTorch's Multinomial entropy takes lgamma(total_count + 1) of an integer tensor, in float32;
# ember's is in the distribution's dtype: float64 entropies differ by ~1e-8
MULTINOMIAL_RTOL = {"entropy()": 1e-7}

CASES = [
    Case("Uniform", {"low": real(), "high": lambda rng, s, d: (rng.uniform(3.0, 4.0, s))
                     .astype(d)}, uniform_values, icdf=True),
    Case("Exponential", {"rate": pos()}, positive_values, icdf=True),
    Case("Laplace", {"loc": real(), "scale": pos()}, real_values, icdf=True),
    Case("Cauchy", {"loc": real(), "scale": pos()}, real_values, icdf=True),
    Case("Bernoulli", {"probs": unit()}, bools, id="probs"),
    Case("Bernoulli", {"logits": real(2.0)}, bools, id="logits"),
    Case("Geometric", {"probs": unit()}, counts(6)),
    Case("Geometric", {"logits": real()}, counts(6), id="logits"),
    Case("Poisson", {"rate": pos(0.5, 8.0)}, counts(10)),
    Case("Binomial", {"total_count": number(7), "probs": unit()}, counts(7)),
    Case("Binomial", {"total_count": number(5), "logits": real()}, counts(5), id="logits"),
    Case("Multinomial", {"total_count": number(6), "probs": simplex_vec(4)},
         multinomial_values(6, 4), event=(4,), rtol=MULTINOMIAL_RTOL),
    Case("Multinomial", {"total_count": number(3), "logits": vec(real(), 3)},
         multinomial_values(3, 3), event=(3,), id="logits", rtol=MULTINOMIAL_RTOL),
    Case("OneHotCategorical", {"probs": simplex_vec(4)}, one_hots, event=(4,)),
    Case("OneHotCategorical", {"logits": vec(real(), 3)}, one_hots, event=(3,), id="logits"),
    Case("OneHotCategoricalStraightThrough", {"probs": simplex_vec(4)}, one_hots,
         event=(4,)),
    Case("Gamma", {"concentration": pos(0.5, 4.0), "rate": pos()}, positive_values),
    Case("Chi2", {"df": pos(1.0, 6.0)}, positive_values),
    Case("Beta", {"concentration1": pos(), "concentration0": pos()}, unit_values),
    Case("Dirichlet", {"concentration": vec(pos(), 4)}, simplex_values, event=(4,)),
]
