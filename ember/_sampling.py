"""Sampling from distributions given by tensors: ``normal``, ``bernoulli``, ``poisson`` and
``multinomial`` (functions and methods), with PyTorch's overloads, checks and errors.

Numbers come from ember's generators (``ember._random``): the distributions are PyTorch's,
the streams are not (a seeded ember program draws other numbers than the same PyTorch one).

Autograd follows PyTorch's derivatives: a sample records a node (``NormalBackward3``,
``BernoulliBackward0``, ``PoissonBackward0``) whose gradient is zero for every input — PyTorch
does not differentiate through sampling (reparameterise by hand: ``mean + std * randn``).
``bernoulli(input, p)`` has no derivative at all: PyTorch records a ``NotImplemented`` node,
and ember refuses its backward with the same message.
"""
from __future__ import annotations

import math

import numpy as np

from . import _device, _dtypes, _errors, _random, _random_signatures
from ._box_muller import normal32
from ._broadcast import broadcast_shapes
from ._creation import _finish, _int_like, _size, _type_name, as_dtype
from ._dispatch import vmap as _vmap
from ._out import factory_out, write_out
from ._out_rules import Rule
from ._tensor import Tensor
from .autograd import grad_mode
from .autograd.function import Function
from .ops import batching
from .ops.registry import defop

__all__ = ["normal", "bernoulli", "poisson", "multinomial"]


_MULTINOMIAL_OUT = Rule(aten="multinomial", warning=None)  # resized without a warning
_BERNOULLI_OUT = Rule(aten="bernoulli", check="any", factory=True, warning=None)

def _zero(xp, g, ans, *args):
    """The derivative PyTorch gives a sample with respect to its parameters: zero."""
    return xp.zeros_like(g)


def _sample_op(name, n_in, overload=0):
    """An op that returns the values drawn for it (its last argument) and whose gradient
    with respect to each of its ``n_in`` tensor inputs is zero."""
    forward = {1: lambda xp, a, values: values,
               2: lambda xp, a, b, values: values}[n_in]
    op = defop(name, n_in=n_in, overload=overload, jvp="transpose", batch="loop")(forward)
    return op.defvjp(*[_zero] * n_in)


# PyTorch's overloads: normal(Tensor, float) is NormalBackward1, normal(float, Tensor) 2,
# normal(Tensor, Tensor) 3 (0 is Tensor.normal_).
_NORMAL_TF = _sample_op("normal", 1, overload=1)
_NORMAL_FT = _sample_op("normal", 1, overload=2)
_NORMAL_TT = _sample_op("normal", 2, overload=3)
_BERNOULLI = _sample_op("bernoulli", 1)
_POISSON = _sample_op("poisson", 1)


def _host(t):
    return _device.to_numpy(t._data)


def _placed(values, like):
    """``values`` (a NumPy array) on the device of tensor ``like``."""
    return values if not like.is_cuda else _device.move(values, like.device)


def _standard_normal(rng, shape, complex_, dtype=None):
    """N(0, 1) samples; complex ones have variance 1/2 in each part, as PyTorch's. For a
    float32 result (``dtype``) float32 samples (``_box_muller``: 3x faster), else float64."""
    if complex_:
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) * math.sqrt(0.5)
    if dtype == np.float32:
        return normal32(rng, shape)
    return rng.standard_normal(shape)


# --------------------------------------------------------------------------- under vmap


def _sampler(impl):
    """The public function of ``impl``: under ``vmap`` a sample is drawn per batch entry,
    as PyTorch does with ``randomness='different'`` (one call per entry); with 'same' one
    draw serves the batch (refused, as by PyTorch, when an input is batched); with 'error'
    (the default) drawing raises PyTorch's error."""
    import functools
    impl.__qualname__ = impl.__name__[1:]  # argument errors name the public function

    @functools.wraps(impl)
    def sampler(*args, **kwargs):
        if not _vmap.depth:
            return impl(*args, **kwargs)
        if _vmap.levels[-1][2] == "error":
            raise RuntimeError(_errors.VMAP_RANDOM)
        batched = batching._union((*args, *kwargs.values()))
        if batched and any(mode == "same" for _, _, mode in _vmap.levels):
            raise RuntimeError("Vmap does not currently support same randomness with a "
                               "batched tensor input. Please file an issue with functorch")
        levels = tuple(sorted(set(batched) | set(batching.random_batch()[0])))
        if not levels:
            return impl(*args, **kwargs)
        return batching.loop(impl, args, kwargs, levels=levels, name=impl.__qualname__)
    sampler.__name__ = impl.__qualname__
    return sampler


# --------------------------------------------------------------------------- normal


def _check_std_number(std):
    if not std >= 0:  # NaN too
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def _check_std_tensor(std):
    if std.is_complex():
        raise RuntimeError("normal expects standard deviation to be non-complex")
    if not (_host(std) >= 0).all():
        raise RuntimeError("normal expects all elements of std >= 0.0")


def _check_normal_dtype(dtype):
    if not (dtype.is_floating_point or dtype.is_complex):
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{dtype._word}'")


def _number(v):
    """``v`` as a float argument (a Python number, NumPy number or 0-d tensor), else None."""
    if isinstance(v, Tensor):
        return v.item() if v.ndim == 0 and not v.is_complex() else None
    if isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, complex)):
        return float(v)
    return None


def _normal(mean=None, std=None, size=None, *, generator=None, out=None, dtype=None,
            layout=None, device=None, pin_memory=False, requires_grad=False):
    """Samples of the normal distribution ``N(mean, std²)``, in PyTorch's four overloads:

    - ``normal(mean: Tensor, std: Tensor)``: elementwise, the two broadcast together;
    - ``normal(mean: Tensor, std: float = 1)`` and ``normal(mean: float, std: Tensor)``;
    - ``normal(mean: float, std: float, size)`` with the factory keywords (``dtype``, ...).

    The tensor overloads take the dtype of ``mean`` (of ``std`` when ``mean`` is a number);
    complex dtypes give complex samples with variance ``std²/2`` in each part. Gradients
    with respect to ``mean`` and ``std`` are zero, as PyTorch's (no reparameterisation).
    Drawn from ember's generator: PyTorch's distribution, not PyTorch's numbers.

    Example::

        >>> ember.normal(ember.zeros(3), ember.tensor([1.0, 2.0, 3.0])).shape
        torch.Size([3])
    """
    args = tuple(a for a in (mean, std, size) if a is not None)
    keywords = {"generator": generator, "out": out}
    if generator is not None and not isinstance(generator, _random.Generator):
        raise _random_signatures.invalid("normal", args, keywords)
    if size is not None:
        return _normal_sized(mean, std, size, generator, out, dtype, device, requires_grad,
                             args, keywords)
    if isinstance(mean, Tensor):
        std = 1.0 if std is None else std
        if isinstance(std, Tensor):
            return _normal_tensors(mean, std, generator, out)
        if _number(std) is None:
            raise _random_signatures.invalid("normal", args, keywords)
        return _normal_tensor_mean(mean, _number(std), generator, out)
    if isinstance(std, Tensor) and _number(mean) is not None:
        return _normal_tensor_std(_number(mean), std, generator, out)
    if mean is not None and std is None:
        raise TypeError(f"normal(): argument 'mean' (position 1) must be Tensor, not "
                        f"{_type_name(mean)}")
    raise _random_signatures.invalid("normal", args, keywords)


def _normal_sized(mean, std, size, generator, out, dtype, device, requires_grad, args,
                  keywords):
    mean, std = _number(mean), _number(std)
    if mean is None or std is None or not isinstance(size, (tuple, list)):
        raise _random_signatures.invalid("normal", args, keywords)
    if out is not None:
        _check_normal_dtype(out.dtype)
        return factory_out("aten::normal", out, as_dtype(dtype, "normal"), lambda dt: _normal(
            mean, std, size, generator=generator, dtype=dt))
    shape = _size((size,), "normal", position=3)
    dtype = as_dtype(dtype, "normal") or _dtypes.get_default_dtype()
    _check_normal_dtype(dtype)
    _check_std_number(std)
    if dtype.np == np.float32:  # (std and mean applied within: two passes fewer)
        return _finish(normal32(_random.rng(generator), shape, mean, std), dtype, device,
                       requires_grad)
    values = mean + std * _standard_normal(_random.rng(generator), shape, dtype.is_complex)
    return _finish(values.astype(dtype.np), dtype, device, requires_grad)


def _normal_out(result, out):
    """``out=`` of the tensor overloads: only a floating or complex ``out`` (PyTorch samples
    in its dtype), resized with PyTorch's warning."""
    if out is None:
        return result
    _check_normal_dtype(out.dtype)
    return write_out("normal", out, result)


def _normal_tensor_mean(mean, std, generator, out):
    _check_normal_dtype(mean.dtype)
    _check_std_number(std)
    m = _host(mean)
    # With ``out``, PyTorch draws in the shape of ``mean`` broadcast with ``out`` (so ``out``
    # keeps a larger shape, and one that does not broadcast is an error, even an empty one).
    shape = m.shape if out is None else broadcast_shapes(m.shape, tuple(out.shape))
    values = _standard_normal(_random.rng(generator), shape, mean.is_complex(), mean.dtype.np)
    values *= std  # (in place: the samples are a new array of the full shape)
    values += m
    values = _placed(values.astype(mean.dtype.np, copy=False), mean)
    if out is not None:
        return _normal_out(Tensor._make(values, None, False) if shape != m.shape
                           else _NORMAL_TF(mean, values), out)
    return _NORMAL_TF(mean, values)


def _normal_tensor_std(mean, std, generator, out):
    _check_normal_dtype(std.dtype)
    _check_std_tensor(std)
    s = _host(std)
    values = _standard_normal(_random.rng(generator), s.shape, False, std.dtype.np)
    values *= s
    values += mean
    values = _placed(values.astype(std.dtype.np, copy=False), std)
    return _normal_out(_NORMAL_FT(std, values), out)


def _normal_tensors(mean, std, generator, out):
    _check_normal_dtype(mean.dtype)
    _check_std_tensor(std)
    shape = broadcast_shapes(tuple(mean.shape), tuple(std.shape))
    noise = _standard_normal(_random.rng(generator), shape, mean.is_complex(), mean.dtype.np)
    values = (_host(mean) + _host(std) * noise).astype(mean.dtype.np, copy=False)
    return _normal_out(_NORMAL_TT(mean, std, _placed(values, mean)), out)


# --------------------------------------------------------------------------- bernoulli


def _check_probabilities(p):
    if not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")


def _bernoulli(input=None, p=None, *, generator=None, out=None):
    """Draws of 0 or 1: ``bernoulli(input)`` is 1 with probability ``input[i]`` (a floating
    tensor in [0, 1]); ``bernoulli(input, p)`` is 1 with probability ``p`` everywhere, in
    ``input``'s shape and dtype. The result has ``input``'s dtype (``out``'s with ``out=``).
    Drawn from ember's generator: PyTorch's distribution, not PyTorch's numbers."""
    args = tuple(a for a in (input, p) if a is not None)
    keywords = {"generator": generator, "out": out}
    if input is None:
        raise _random_signatures.invalid("bernoulli", args, keywords)
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli(): argument 'input' (position 1) must be Tensor, not "
                        f"{_type_name(input)}")
    if (generator is not None and not isinstance(generator, _random.Generator)) or (
            p is not None and (out is not None or _number(p) is None
                               or isinstance(p, Tensor))):
        raise _random_signatures.invalid("bernoulli", args, keywords)
    rng = _random.rng(generator)
    if p is not None:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
        values = _placed((rng.random(tuple(input.shape)) < p).astype(input.dtype.np), input)
        result = Tensor._make(values, None, False)
        if input.requires_grad and _grad_enabled():
            result = _no_derivative("bernoulli", input, result)
        return result
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for "
                                  f"'{input.dtype._word}'")
    probs = _host(input)
    _check_probabilities(probs)
    draw = rng.random(probs.shape) < probs
    if out is not None:
        if input.requires_grad and _grad_enabled():
            raise RuntimeError(_errors.OUT_AUTOGRAD.format(name="bernoulli"))
        return factory_out(_BERNOULLI_OUT, out, None, lambda dt: Tensor._make(
            _placed(draw.astype(dt.np), input), None, False))
    return _BERNOULLI(input, _placed(draw.astype(input.dtype.np), input))


def _grad_enabled():
    return grad_mode.is_grad_enabled()


def _no_derivative(name, input, result):
    """``result`` with a ``NotImplemented`` node, as PyTorch records for an op whose
    derivative it does not implement: backward through it raises PyTorch's error."""
    out = _NotImplemented.apply(input, result, name)
    type(out.grad_fn).__name__ = "NotImplemented"  # PyTorch's node name
    return out


def _not_implemented_class():

    class NotImplemented(Function):  # noqa: A001 - PyTorch's node name
        @staticmethod
        def forward(ctx, x, result, name):
            ctx.name = name
            return result.clone()

        @staticmethod
        def backward(ctx, g):
            raise RuntimeError(f"derivative for aten::{ctx.name} is not implemented")

    return NotImplemented


_NotImplemented = _not_implemented_class()


def _bernoulli_method(self, p=None, *, generator=None):
    """``Tensor.bernoulli(p=None, *, generator=None)``: ``ember.bernoulli(self, p)``."""
    if generator is not None and not isinstance(generator, _random.Generator):
        raise _random_signatures.invalid(
            "bernoulli", () if p is None else (p,), {"generator": generator},
            ("*, torch.Generator generator = None", "float p, *, torch.Generator generator = None"))
    return bernoulli(self, p, generator=generator)


# --------------------------------------------------------------------------- poisson

_POISSON_MAX = 1e18  # NumPy's sampler refuses larger rates (PyTorch returns garbage there)


def _poisson(input=None, generator=None):
    """Counts drawn from the Poisson distribution of rate ``input[i]`` (a floating tensor of
    non-negative rates), in ``input``'s dtype. PyTorch gives nonsense for infinite or huge
    rates (beyond about 1e18); ember refuses them with a RuntimeError instead.
    Drawn from ember's generator: PyTorch's distribution, not PyTorch's numbers."""
    if input is None:
        raise TypeError('poisson() missing 1 required positional arguments: "input"')
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson(): argument 'input' (position 1) must be Tensor, not "
                        f"{_type_name(input)}")
    if generator is not None and not isinstance(generator, _random.Generator):
        raise TypeError(f"poisson(): argument 'generator' must be torch.Generator, not "
                        f"{_type_name(generator)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{input.dtype._word}'")
    rates = _host(input).astype(np.float64)
    if not (rates >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    if (rates > _POISSON_MAX).any():
        raise RuntimeError(f"poisson: ember cannot sample rates above {_POISSON_MAX:g} (PyTorch "
                           "returns meaningless values there)")
    values = np.asarray(_random.rng(generator).poisson(rates)).astype(input.dtype.np)
    return _POISSON(input, _placed(values, input))


# --------------------------------------------------------------------------- multinomial


def _check_multinomial(input, num_samples, replacement, generator, out):
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' (position 1) must be Tensor, not "
                        f"{_type_name(input)}")
    if not _int_like(num_samples):
        raise TypeError(f"multinomial(): argument 'num_samples' (position 2) must be int, not "
                        f"{_type_name(num_samples)}")
    if not isinstance(replacement, bool):
        raise TypeError(f"multinomial(): argument 'replacement' (position 3) must be bool, not "
                        f"{_type_name(replacement)}")
    if generator is not None and not isinstance(generator, _random.Generator):
        raise TypeError(f"multinomial(): argument 'generator' must be torch.Generator, not "
                        f"{_type_name(generator)}")
    if out is not None and out.dtype is not _dtypes.int64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {out.dtype._word}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{input.dtype._word}")
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    n = int(num_samples)
    if n <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = input.shape[-1]
    if not replacement and n > categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if categories > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    return n


def _multinomial(input, num_samples=None, replacement=False, *, generator=None, out=None):
    """Category indices drawn from the rows of ``input`` (1-D or 2-D; non-negative weights,
    not necessarily normalised): ``num_samples`` per row, int64.

    With ``replacement`` every draw is independent. Without it the draws of a row are
    sequential, each from the categories not yet drawn with their weights renormalised —
    sampled at once by the exponential race (the ``num_samples`` largest of ``w_i / E_i``
    with ``E_i`` standard exponential), which has exactly that distribution. As in PyTorch,
    when fewer categories than ``num_samples`` have weight, zero-weight ones fill the rest.
    Drawn from ember's generator: PyTorch's distribution, not PyTorch's numbers.

    Example::

        >>> ember.multinomial(ember.tensor([0.0, 1.0, 0.0]), 1)
        tensor([1])
    """
    if num_samples is None:
        raise TypeError('multinomial() missing 1 required positional arguments: "num_samples"')
    n = _check_multinomial(input, num_samples, replacement, generator, out)
    w = _host(input).astype(np.float64)
    rows = w.reshape(-1, w.shape[-1])
    if replacement and n > 1:
        _check_rows_one_by_one(rows)
    elif rows.shape[0]:
        if not (np.isfinite(rows) & (rows >= 0)).all():
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if not (rows.sum(axis=1) > 0).all():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = _random.rng(generator)
    if replacement and n > 1:
        idx = _with_replacement(rng, rows, n)
    else:  # one draw is the same with or without replacement: the race, for every row at once
        idx = _without_replacement(rng, rows, n)
    idx = idx.reshape(w.shape[:-1] + (n,)).astype(np.int64)
    result = Tensor._make(_placed(idx, input), None, False)
    if out is not None:
        return write_out("multinomial", out, result, _MULTINOMIAL_OUT)
    return result


def _check_rows_one_by_one(rows):
    """The checks of PyTorch's sampler with replacement (``num_samples > 1``), in its order
    and words: row by row, its first bad entry (negative or NaN, then infinite), then its sum."""
    bad = ~(rows >= 0) | ~np.isfinite(rows)
    failing = bad.any(axis=1) | ~(rows.sum(axis=1) > 0)
    if not failing.any():
        return
    r = np.argmax(failing)  # the first row that fails
    if not bad[r].any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not rows[r, np.argmax(bad[r])] >= 0:
        raise RuntimeError("invalid multinomial distribution (encountering probability entry "
                           "< 0)")
    raise RuntimeError("invalid multinomial distribution (encountering probability entry = "
                       "infinity or NaN)")


def _with_replacement(rng, rows, n):
    """Independent draws: a uniform number located in its row's cumulative weights. All rows
    are searched at once, row ``r``'s numbers shifted into ``[r, r + 1)``; a draw is kept
    on its row's last category with weight (rounding can never pick an empty category)."""
    count, k = rows.shape
    cdf = np.cumsum(rows, axis=1)
    cdf /= cdf[:, -1:]
    shift = np.arange(count, dtype=np.float64)[:, None]
    u = rng.random((count, n)) + shift
    idx = np.searchsorted((cdf + shift).ravel(), u.ravel(), side="right").reshape(count, n)
    idx -= np.arange(count)[:, None] * k
    last = k - 1 - np.argmax(rows[:, ::-1] > 0, axis=1)  # each row's last category with weight
    return np.clip(idx, 0, last[:, None])


def _without_replacement(rng, rows, n):
    """The exponential race: category ``i`` finishes at time ``E_i / w_i``; the first ``n``
    to finish are a sample without replacement in the order drawn."""
    e = rng.standard_exponential(rows.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        keys = rows / e  # larger = earlier; zero-weight categories last (key 0)
    order = np.argsort(-keys, axis=1, kind="stable")
    return order[:, :n]


def _multinomial_method(self, num_samples=None, replacement=False, *, generator=None):
    """``Tensor.multinomial``: ``ember.multinomial(self, ...)``."""
    if num_samples is not None and not _int_like(num_samples):
        raise TypeError(f"multinomial(): argument 'num_samples' (position 1) must be int, not "
                        f"{_type_name(num_samples)}")
    return multinomial(self, num_samples, replacement, generator=generator)


normal = _sampler(_normal)
bernoulli = _sampler(_bernoulli)
poisson = _sampler(_poisson)
multinomial = _sampler(_multinomial)

Tensor.bernoulli = _bernoulli_method
Tensor.multinomial = _multinomial_method
