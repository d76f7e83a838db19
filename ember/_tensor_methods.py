"""Binds the public op functions to ``Tensor`` as methods, operators and in-place forms.

``ember.exp(x)`` and ``x.exp()`` are the same function; ``x.exp_()`` runs it and writes the
result into ``x`` (``Tensor._inplace``), with PyTorch's version-counter and leaf checks.
"""
from __future__ import annotations

import functools
import inspect
import math
import re
import warnings

import numpy as np

from . import _creation, _device, _dtypes, _memory_format, _random
from ._box_muller import normal32
from ._random_signatures import invalid
from ._tensor import Tensor, _dtype_word
from .cuda.streams import Stream
from .ops import (  # noqa: F401  (importing a family runs its declarations: ops/_surface.py)
    _surface,
    complex,
    complex_views,
    gamma,
    histogram,
    incomplete_gamma,
    indexing,
    integer,
    legacy,
    linalg,
    nn,
    pointwise,
    reduction,
    shape,
    sorting,
    special_functions,
    unary,
)
from .ops.indexing.writing import _copy
from .ops.registry import defop


def _make_inplace(fn):
    def method(self, *args, **kwargs):
        try:
            return self._inplace(fn, *args, **kwargs)
        except TypeError as e:
            raise TypeError(_as_method_error(str(e), fn.__name__)) from None
    method.__name__ = fn.__name__ + "_"
    method.__doc__ = f"In-place version of :func:`{fn.__name__}`."
    return method


def _as_method_error(message, name):
    """The argument parser's TypeError for ``torch.name(input, ...)`` as PyTorch words it for
    the method ``input.name_(...)``: ``self`` is no argument there, so positions shift by one
    and the signatures lose ``Tensor input`` and ``out``."""
    head = f"{name}(): argument "
    if message.startswith(head):
        m = re.match(r"'(\w+)' \(position (\d+)\)(.*)", message[len(head):], re.S)
        if m:
            return f"{name}_(): argument '{m[1]}' (position {int(m[2]) - 1}){m[3]}"
    head = f"{name}() received an invalid combination of arguments - got ("
    if message.startswith(head):
        got, _, rest = message[len(head):].partition("), but expected one of:")
        got = got[len("Tensor, "):] if got.startswith("Tensor, ") else got
        rest = re.sub(r"\(Tensor input, ", "(", rest).replace(", *, Tensor out = None", "")
        return f"{name}_() received an invalid combination of arguments - got ({got}), " \
               f"but expected one of:{rest}"
    return message


# ------------------------------------------------------------------ NumPy's keyword names
# PyTorch's argument parser takes NumPy's spellings for two keywords of every native function
# and method: ``axis`` for ``dim`` and ``keepdims`` for ``keepdim``. Functions PyTorch writes
# in Python take neither (its ``Tensor.split``, ``torch.norm``, ``torch.nn.functional``...).
_NUMPY_KEYWORDS = (("axis", "dim"), ("keepdims", "keepdim"))
_PYTHON_FUNCTIONS = frozenset(("norm", "split", "unique", "unique_consecutive"))
_PYTHON_METHODS = _PYTHON_FUNCTIONS | {"unflatten"}


def numpy_keywords(fn):
    """``fn`` also taking ``axis=`` for its ``dim`` and ``keepdims=`` for its ``keepdim``, as
    PyTorch's argument parser does (both spellings at once: its TypeError); ``fn`` itself when
    it has neither parameter."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    positional = [n for n, p in params.items() if p.kind in (p.POSITIONAL_ONLY,
                                                             p.POSITIONAL_OR_KEYWORD)]
    aliases = tuple((alias, name, positional.index(name) if name in positional else math.inf)
                    for alias, name in _NUMPY_KEYWORDS if name in params and alias not in params)
    if not aliases:
        return fn
    names = {alias for alias, _, _ in aliases}

    def function(*args, **kwargs):
        if not kwargs:
            return fn(*args)
        for alias, name, position in aliases:
            if alias in kwargs and (name in kwargs or len(args) > position):
                first = next(k for k in kwargs if k in names)  # PyTorch names the first
                raise TypeError(f"{fn.__name__}() got an unexpected keyword argument "
                                f"'{first}'")
        for alias, name, _ in aliases:
            if alias in kwargs:
                kwargs[name] = kwargs.pop(alias)
        return fn(*args, **kwargs)
    functools.update_wrapper(function, fn)
    return function


def add_numpy_keywords(namespace):
    """Give the public functions in ``namespace`` (``ember``'s) NumPy's keyword names."""
    for name, fn in _surface.FUNCTIONS.items():
        if name not in _PYTHON_FUNCTIONS and namespace.get(name) is fn:
            namespace[name] = numpy_keywords(fn)


def _bind_declared():
    """Bind what the op families declared (``ops/_surface.py``): each method, and its
    in-place form — the generic one, or the one its declaration makes."""
    for name, fn in _surface.METHODS.items():
        setattr(Tensor, name, fn if name in _PYTHON_METHODS else numpy_keywords(fn))
    for name, how in _surface.INPLACE.items():
        method = getattr(Tensor, name)
        setattr(Tensor, name + "_", _make_inplace(method) if how is True else
                how(_surface.METHODS[name], name + "_"))


_bind_declared()


def _fill_(self, value):
    """Fill with ``value`` (a number or a 0-dim tensor) in place."""
    if isinstance(value, Tensor):
        self._check_inplace()  # (PyTorch refuses a leaf before looking at the value)
        if value.ndim != 0:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
        return self._inplace(indexing.writing._fill, value)
    return self._inplace(indexing.writing._fill_scalar, value)


def _zero_(self):
    """Fill with zeros in place."""
    return self._inplace(indexing.writing._zero)


def _copy_(self, src, non_blocking=False):
    """Copy ``src`` (broadcast, cast) into self in place."""
    if isinstance(src, Tensor) and src.is_cuda != self.is_cuda:
        src = src.to(self.device)
    return self._inplace(_copy, src)


def _type_as(self, other):
    """Self converted to ``other``'s dtype (and device)."""
    return _to(self, other)


Tensor.type_as = _type_as
Tensor.fill_ = _fill_
Tensor.zero_ = _zero_
Tensor.copy_ = _copy_

# ------------------------------------------------------------------ operators


def _swap(fn):
    def reflected(self, other):
        return fn(other, self)
    return reflected


_OPERANDS = pointwise._OPERANDS
_INEXACT = frozenset(type(np.dtype(c)) for c in "efdFD")
_REAL = frozenset(type(np.dtype(c)) for c in "efd")
_INT64_MIN, _UINT64_END = -(1 << 63), 1 << 64


def _operator(fn, name, fast=None, extra=(), dtypes=_INEXACT, tensors=None):
    """The operator ``name``: ``fn(self, other)`` for a Tensor or a number ``other`` (a NumPy
    array too, as before); NotImplemented for anything else, so that Python raises its own
    TypeError (and ``==`` falls back to identity), as PyTorch's operators do.

    ``fast(self, other, *extra)``, the op itself, serves the common cases in short, where
    ``fn`` would check and pass through: ``self`` of one of ``dtypes`` beside a Python float or
    a Python int of PyTorch's range; beside a tensor, when ``tensors`` is "any", whatever the
    dtypes (the op promotes them), when "same", of ``self``'s dtype only."""
    def operator(self, other):
        if fast is not None:
            t = type(other)
            if t is Tensor:
                if tensors == "any" or tensors == "same" and (
                        other._data.dtype is self._data.dtype and
                        type(self._data.dtype) in dtypes):
                    return fast(self, other, *extra) if extra else fast(self, other)
            elif t is float or t is int and _INT64_MIN <= other < _UINT64_END:
                if type(self._data.dtype) in dtypes:
                    return fast(self, other, *extra) if extra else fast(self, other)
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return fn(self, other)
    operator.__name__ = operator.__qualname__ = name
    return operator


# PyTorch's operators: the function (``torch.add``...), the reflected form as PyTorch writes
# it (``other - self`` is ``rsub``, ``other / self`` is ``self.reciprocal() * other``, the
# commutative ones keep the tensor first) and the in-place method.
for _op, _fn, _rfn, _inplace in [
        ("add", pointwise.add, pointwise.add, "add_"),
        ("sub", pointwise.sub, pointwise.rsub, "sub_"),
        ("mul", pointwise.mul, pointwise.mul, "mul_"),
        ("truediv", pointwise.div, pointwise._rtruediv, "div_"),
        ("floordiv", pointwise.floor_divide, _swap(pointwise.floor_divide), "floor_divide_"),
        ("mod", pointwise.remainder, _swap(pointwise.remainder), "remainder_"),
        ("pow", pointwise.pow, _swap(pointwise.pow), "pow_"),
        ("and", pointwise.bitwise_and, pointwise.bitwise_and, "bitwise_and_"),
        ("or", pointwise.bitwise_or, pointwise.bitwise_or, "bitwise_or_"),
        ("xor", pointwise.bitwise_xor, pointwise.bitwise_xor, "bitwise_xor_"),
        ("lshift", pointwise.bitwise_left_shift, _swap(pointwise.bitwise_left_shift),
         "bitwise_left_shift_"),
        ("rshift", pointwise.bitwise_right_shift, _swap(pointwise.bitwise_right_shift),
         "bitwise_right_shift_")]:
    setattr(Tensor, f"__{_op}__", _operator(_fn, f"__{_op}__"))
    setattr(Tensor, f"__r{_op}__", _operator(_rfn, f"__r{_op}__"))
    setattr(Tensor, f"__i{_op}__", _operator(getattr(Tensor, _inplace), f"__i{_op}__"))
# The hot ones with their ops for the common cases (see ``_operator``).
Tensor.__add__ = _operator(pointwise.add, "__add__", pointwise._add, (1,), tensors="any")
Tensor.__radd__ = _operator(pointwise.add, "__radd__", pointwise._add, (1,), tensors="any")
Tensor.__sub__ = _operator(pointwise.sub, "__sub__", pointwise._sub, (1,), tensors="same")
Tensor.__rsub__ = _operator(pointwise.rsub, "__rsub__", pointwise._rsub, (1,))
Tensor.__mul__ = _operator(pointwise.mul, "__mul__", pointwise._mul, tensors="any")
Tensor.__rmul__ = _operator(pointwise.mul, "__rmul__", pointwise._mul, tensors="any")
Tensor.__truediv__ = _operator(pointwise.div, "__truediv__", pointwise._div, tensors="any")
for _op in ("eq", "ne"):
    setattr(Tensor, f"__{_op}__", _operator(getattr(pointwise, _op), f"__{_op}__",
                                            getattr(pointwise, f"_{_op}"), tensors="any"))
for _op in ("lt", "le", "gt", "ge"):  # (complex numbers are not ordered: those go the long way)
    setattr(Tensor, f"__{_op}__", _operator(getattr(pointwise, _op), f"__{_op}__",
                                            getattr(pointwise, f"_{_op}"), dtypes=_REAL,
                                            tensors="same"))
Tensor.__matmul__ = linalg.matmul
Tensor.__rmatmul__ = _swap(linalg.matmul)
Tensor.__neg__ = pointwise.neg
Tensor.__pos__ = pointwise.positive
Tensor.__hash__ = lambda self: id(self)
Tensor.__invert__ = pointwise._invert
Tensor.__abs__ = pointwise.abs
Tensor.__getitem__ = indexing.getitem
Tensor.__setitem__ = indexing.setitem

# ------------------------------------------------------------------ conversions


def _to(self, *args, **kwargs):
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)`` or ``to(other)``: converted copy."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    fmt = _memory_format.check(kwargs.pop("memory_format", None), "to")
    for a in args:
        if isinstance(a, _dtypes.dtype) or any(a is t for t in (bool, int, float, complex)):
            dtype = a  # (Python's types stand for PyTorch's dtypes, as in ``torch.zeros``)
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (str, _device.device)):
            device = a
    out = self
    if dtype is not None:
        out = shape.to_dtype(out, _creation.as_dtype(dtype, "to"), copy)
    if device is not None:
        dev = _device.canonical(device)
        if dev != out.device:
            out = _move(out, dev)
    if fmt is not _memory_format.preserve_format:
        # PyTorch copies into ``fmt`` unless the result already reads as laid out that way
        _memory_format.check_rank(out.ndim, fmt)
        if _memory_format.suggest(out._data) is not fmt:
            out = _to_layout(out, fmt)
    return out


@defop("to_copy", n_in=1, jvp="linear", batch="pointwise")
def _to_layout(xp, input, fmt):
    return _memory_format.relayout(input, fmt)


_to_layout.defvjp(lambda xp, g, ans, input, fmt: g)


def _move(t, dev):
    return _to_device(t, dev, t.device)


@defop("to_copy", n_in=1, jvp="linear", batch="pointwise")
def _to_device(xp, input, device, source):
    return _device.move(input, device)


_to_device.defvjp(lambda xp, g, ans, input, device, source:
                  g.to(source) if isinstance(g, Tensor) else _device.move(g, source))

Tensor.to = _to


def _cpu(self, *args, memory_format=None):
    if args:
        raise TypeError(f"cpu() takes 0 positional arguments but {len(args)} was given")
    return _to(self, "cpu", memory_format=memory_format)


Tensor.cpu = _cpu
Tensor.cuda = lambda self, device=None, non_blocking=False, memory_format=None: _to(
    self, "cuda" if device is None else _device.device("cuda", device)
    if isinstance(device, int) else device, memory_format=memory_format)


def _pin_memory(self, device=None):
    """A copy of this CPU tensor in page-locked memory, which the GPU copies from without
    staging (``to('cuda', non_blocking=True)`` overlaps with work). Needs a GPU, as in
    PyTorch; with ``--cuda-on-cpu`` (no GPU, ``cuda`` is the CPU) it is a plain copy."""
    if self.is_cuda:
        raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    copy = _to(self, "cpu", copy=True)
    if _device.cuda_available():
        pinned = _device.pinned_empty(copy._data.shape, copy._data.dtype)
        pinned[...] = copy._data
        copy._data = pinned  # (a copy nobody else has seen)
    elif not _device.CUDA_ON_CPU:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return copy


def _is_pinned(self, device=None) -> bool:
    return not self.is_cuda and _device.is_pinned(self._data)


Tensor.pin_memory = _pin_memory
Tensor.is_pinned = _is_pinned


def _caster(dtype):
    def cast(self, memory_format=None):
        return _to(shape.to_dtype(self, dtype), memory_format=memory_format)
    cast.__name__ = dtype.name
    return cast


for _m, _d in [("float", _dtypes.float32), ("double", _dtypes.float64), ("half", _dtypes.float16),
               ("long", _dtypes.int64), ("int", _dtypes.int32), ("short", _dtypes.int16),
               ("char", _dtypes.int8), ("byte", _dtypes.uint8), ("bool", _dtypes.bool),
               ("cfloat", _dtypes.complex64), ("cdouble", _dtypes.complex128),
               ("bfloat16", _dtypes.bfloat16)]:
    setattr(Tensor, _m, _caster(_d))

# ------------------------------------------------------------------ factories on a tensor


def _factory(maker):
    """``x.new_zeros(size)`` and the like: ``maker`` with x's dtype and device by default."""
    def method(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False):
        size = _creation._size(size, method.__name__)  # (PyTorch's errors, in its words)
        return maker(size, dtype=dtype or self.dtype, device=device or self.device,
                     requires_grad=requires_grad)
    method.__name__ = f"new_{maker.__name__}"
    method.__doc__ = f"A new tensor like ``{maker.__name__}(size)``, by default of self's dtype " \
                     "and device."
    return method


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
              layout=None, pin_memory=False):
    """A tensor of ``size`` filled with ``fill_value``, by default of self's dtype and device."""
    return _creation.full(size, fill_value, dtype=dtype or self.dtype,
                          device=device or self.device, requires_grad=requires_grad)


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None,
                pin_memory=False):
    """A copy of ``data`` as a new leaf, by default of self's dtype and device."""
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
        data = _device.to_numpy(data._data)
    return _creation.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                            requires_grad=requires_grad)


Tensor.new_zeros = _factory(_creation.zeros)
Tensor.new_ones = _factory(_creation.ones)
Tensor.new_empty = _factory(_creation.empty)
Tensor.new_full = _new_full
Tensor.new_tensor = _new_tensor

# ------------------------------------------------------------------ in-place random fills
# Each fill is an op (``UniformBackward0``, ...) whose derivative is zero, as in PyTorch: the
# values are drawn from ember's generator first and handed to the op, which returns them.


def _random_op(name, overload=0):
    op = defop(name, n_in=1, overload=overload, jvp="transpose",
               batch="loop")(lambda xp, input, values: values)
    return op.defvjp(lambda xp, g, ans, input, values: xp.zeros_like(g))


_RANDOM_OPS = {name: _random_op(name) for name in (
    "uniform", "normal", "random", "exponential", "geometric", "log_normal", "cauchy")}
# PyTorch numbers bernoulli_'s overloads: a tensor of probabilities (1) or a number (2).
_RANDOM_OPS["bernoulli_tensor"] = _random_op("bernoulli", 1)
_RANDOM_OPS["bernoulli"] = _random_op("bernoulli", 2)


def _refuse_integers(self, kernel, complex_too=False):
    dtype = self._data.dtype
    if not (_dtypes.is_floating(dtype) if complex_too else _dtypes.is_inexact(dtype)):
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_dtype_word(self._data.dtype)}'")


def _continuous_only(self, distribution, word):
    if not _dtypes.is_floating(self._data.dtype):
        raise RuntimeError(f"{distribution} distribution is a continuous probability "
                           "distribution. dtype must be a floating point but you specified "
                           f"{word}")


# bernoulli_ and random_ have several overloads: PyTorch lists them when refusing a generator
_FILL_SIGNATURES = {
    "bernoulli": ("Tensor p, *, torch.Generator generator = None",
                  "float p = 0.5, *, torch.Generator generator = None"),
    "random": ("*, torch.Generator generator = None",
               "int from, int to, *, torch.Generator generator = None",
               "int to, *, torch.Generator generator = None")}


def _check_fill_generator(name, generator, args=()):
    """PyTorch's TypeError when the ``generator=`` of ``name_`` is not a Generator."""
    if generator is None or isinstance(generator, _random.Generator):
        return
    if name in _FILL_SIGNATURES:
        raise invalid(name + "_", args, {"generator": generator}, _FILL_SIGNATURES[name])
    raise TypeError(f"{name}_(): argument 'generator' must be torch.Generator, not "
                    f"{type(generator).__name__}")


def _complex_draw(self, draw, scale=1.0):
    """``draw`` for a complex tensor: real and imaginary parts drawn apart (each scaled by
    ``scale``), as PyTorch fills complex tensors."""
    if self._data.dtype.kind != "c":
        return draw
    return lambda rng, s: (draw(rng, s) + 1j * draw(rng, s)) * scale


def _fill_random(self, name, draw, generator, op=None):
    """Write ``draw(rng, shape)`` (float64 or integer NumPy values) into self, in place."""
    _check_fill_generator(name, generator)
    self._check_inplace()
    values = np.asarray(draw(_random.rng(generator), self._data.shape)).astype(
        self._data.dtype, copy=False)  # (a fresh array: a float32 draw needs no copy)
    if self.is_cuda:
        values = _device.move(values, self.device)
    return self._assign((op or _RANDOM_OPS[name])(self, values), name + "_")


def _uniform_(self, from_=0, to=1, *, generator=None):
    """Fill with samples uniform on ``[from, to)``."""
    _refuse_integers(self, "check_uniform_bounds")
    info = _creation._finfo(_dtypes.from_numpy_dtype(self._data.dtype.type(0).real.dtype))
    for label, v in (("from", from_), ("to", to)):
        if not -info.max <= v <= info.max:  # NaN and infinities too
            raise RuntimeError(f"{label} is out of bounds for "
                               f"{_dtypes.from_numpy_dtype(np.dtype(info.dtype))._cpp_name}")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_:g} > to={to:g}")
    if to - from_ > info.max:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<"
                           f"{_dtype_word(info.dtype)}>::max(), but found to={to:g} and "
                           f"from={from_:g} which result in to-from to exceed the limit")
    return _fill_random(self, "uniform", _complex_draw(
        self, lambda rng, s: from_ + (to - from_) * rng.random(s)), generator)


def _normal_(self, mean=0, std=1, *, generator=None):
    """Fill with samples of the normal distribution ``N(mean, std²)``."""
    _refuse_integers(self, "normal_kernel_cpu")
    if not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    if self._data.dtype.kind == "c":  # variance std**2 / 2 in each part, as PyTorch
        draw = _complex_draw(self, lambda rng, s: rng.standard_normal(s), std * 0.5 ** 0.5)
        return _fill_random(self, "normal", lambda rng, s: mean + draw(rng, s), generator)
    if self._data.dtype == np.float32:  # Box-Muller in float32 (see _box_muller)
        return _fill_random(self, "normal", lambda rng, s: normal32(rng, s, mean, std),
                            generator)
    return _fill_random(self, "normal", lambda rng, s: rng.normal(mean, std, s), generator)


def _log_normal_(self, mean=1, std=2, *, generator=None):
    """Fill with ``exp(N(mean, std²))`` samples."""
    _refuse_integers(self, "log_normal_cpu", complex_too=True)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    return _fill_random(self, "log_normal", lambda rng, s: rng.lognormal(mean, std, s),
                        generator)


def _exponential_(self, lambd=1, *, generator=None):
    """Fill with samples of the exponential distribution of rate ``lambd``."""
    _continuous_only(self, "Exponential", _dtype_word(self._data.dtype))
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    return _fill_random(self, "exponential", lambda rng, s: rng.exponential(1 / lambd, s),
                        generator)


def _cauchy_(self, median=0, sigma=1, *, generator=None):
    """Fill with samples of the Cauchy distribution ``median + sigma * tan(pi (U - 1/2))``."""
    _continuous_only(self, "Cauchy", self.dtype._cpp_name)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    return _fill_random(self, "cauchy",
                        lambda rng, s: median + sigma * rng.standard_cauchy(s), generator)


def _bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 1 where a draw uniform on [0, 1) is below ``p`` (a number or a tensor of
    probabilities broadcast to self), else 0."""
    if isinstance(p, Tensor):
        probs = _device.to_numpy(p._data)
        if not ((probs >= 0) & (probs <= 1)).all():
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  "
                               "(Could this error message be improved?  If so, please report "
                               "an enhancement request to PyTorch.)")
    else:
        probs = p
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
        if self._data.dtype.kind == "c":
            raise NotImplementedError(f"\"bernoulli_scalar_cpu_\" not implemented for "
                                      f"'{_dtype_word(self._data.dtype)}'")
    op = _RANDOM_OPS["bernoulli_tensor" if isinstance(p, Tensor) else "bernoulli"]
    return _fill_random(self, "bernoulli", lambda rng, s: rng.random(s) < probs, generator, op)


def _geometric_(self, p, *, generator=None):
    """Fill with the number of Bernoulli(``p``) trials up to the first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    if self._data.dtype.kind == "c":
        raise NotImplementedError(f"\"geometric_cpu\" not implemented for "
                                  f"'{_dtype_word(self._data.dtype)}'")
    return _fill_random(self, "geometric", lambda rng, s: rng.geometric(p, s), generator)


def _random_(self, from_=0, to=None, *, generator=None):
    """Fill with integers uniform on ``[from, to)``; ``random_(to)`` is ``[0, to)``, and
    ``random_()`` spans ``[0, 2**mantissa]`` for floats or every non-negative value of an
    integer dtype."""
    if to is None and from_ != 0:
        from_, to = 0, from_
    dt = self._data.dtype
    if dt.kind == "c":
        raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                           "boolean types")
    if to is None:
        high = (1 << (np.finfo(dt).nmant + 1)) + 1 if dt.kind in "fc" else \
            2 if dt.kind == "b" else int(np.iinfo(dt).max) + 1
    else:
        if from_ >= to:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                               f"from={from_} >= to={to}")
        if dt.kind in "iu":
            info = np.iinfo(dt)
            for value, what in ((from_, "from"), (to - 1, "to - 1")):
                if not info.min <= value <= info.max:
                    raise RuntimeError(f"{what} is out of bounds for {self.dtype._cpp_name}")
        high = to
    return _fill_random(self, "random",
                        lambda rng, s: rng.integers(from_, high - 1, s, endpoint=True), generator)


def _keyword_from(method):
    """PyTorch spells the lower bound ``from``, a Python keyword: accept it as ``from=``."""
    def wrapper(self, *args, **kwargs):
        if "from" in kwargs:
            kwargs["from_"] = kwargs.pop("from")
        return method(self, *args, **kwargs)
    wrapper.__name__, wrapper.__doc__ = method.__name__.lstrip("_"), method.__doc__
    return wrapper


Tensor.uniform_ = _keyword_from(_uniform_)
Tensor.random_ = _keyword_from(_random_)
Tensor.normal_ = _normal_
Tensor.log_normal_ = _log_normal_
Tensor.exponential_ = _exponential_
Tensor.cauchy_ = _cauchy_
Tensor.bernoulli_ = _bernoulli_
Tensor.geometric_ = _geometric_

from . import _shared_memory  # noqa: E402  (share_memory_ / is_shared: see its note)

Tensor.share_memory_ = _shared_memory.share_memory_
Tensor.is_shared = _shared_memory.is_shared


def _record_stream(self, *args):
    """Tell the allocator that ``stream`` uses this CUDA tensor. PyTorch defers freeing the
    memory until the stream's queued work is done; CuPy's pool has no such hook, so ember
    waits for the stream here instead (safe, if slower). A CPU tensor has no stream to wait
    on: PyTorch has no CPU kernel for this op."""
    if len(args) != 1:
        raise TypeError('record_stream() missing 1 required positional arguments: "s"' if not args
                        else f"record_stream() takes 1 positional argument but {len(args)} were "
                        "given")
    stream = args[0]
    if not isinstance(stream, Stream):
        raise RuntimeError("unknown parameter type")
    if self.is_cpu:
        raise NotImplementedError("Could not run 'aten::record_stream' with arguments from the "
                                  "'CPU' backend.")
    stream.synchronize()


Tensor.record_stream = _record_stream
