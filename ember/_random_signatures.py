"""The overloads PyTorch lists when its argument parser refuses a call of a random function
(``rand``, ``randint``, ``normal``, ...), and that TypeError built the way PyTorch words it."""
from __future__ import annotations

_TAIL = ("torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
         "bool pin_memory = False, bool requires_grad = False")
_LIKE_TAIL = "torch.memory_format memory_format = None, " + _TAIL


def _factory(head):
    """A factory's two overloads: with a generator, and without."""
    return (f"{head}, *, torch.Generator generator, Tensor out = None, {_TAIL}",
            f"{head}, *, Tensor out = None, {_TAIL}")


def _like(head):
    return (f"{head}, *, torch.Generator generator, {_LIKE_TAIL}", f"{head}, *, {_LIKE_TAIL}")


SIGNATURES = {
    "rand": _factory("tuple of ints size"),
    "randn": _factory("tuple of ints size"),
    "randperm": _factory("int n"),
    "randint": _factory("int high, tuple of ints size")
    + _factory("int low, int high, tuple of ints size"),
    "rand_like": _like("Tensor input"),
    "randn_like": _like("Tensor input"),
    "randint_like": _like("Tensor input, int low, int high") + _like("Tensor input, Tensor high")
    + _like("Tensor input, int high"),
    "normal": (
        "Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None",
        "Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None",
        "float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None",
        "float mean, float std, tuple of ints size, *, torch.Generator generator = None, "
        "Tensor out = None, " + _TAIL),
    "multinomial": ("Tensor input, int num_samples, bool replacement = False, *, "
                    "torch.Generator generator = None, Tensor out = None",),
    "poisson": ("Tensor input, torch.Generator generator = None",),
    "bernoulli": ("Tensor input, *, torch.Generator generator = None, Tensor out = None",
                  "Tensor input, float p, *, torch.Generator generator = None"),
}


def type_word(value):
    """The name PyTorch's argument parser gives ``value``'s type (``torch.dtype``, ...)."""
    t = type(value)
    if t.__module__.startswith("ember"):
        return "Tensor" if t.__name__ == "Tensor" else "torch." + t.__name__
    return t.__name__


def invalid(name, args, kwargs, signatures=None):
    """PyTorch's TypeError when no overload of ``name`` accepts ``args`` and ``kwargs``
    (keywords whose value is the default None are not listed, as PyTorch omits them)."""
    got = [type_word(a) for a in args]
    got += [f"{k}={type_word(v)}" for k, v in kwargs.items() if v is not None]
    shown = ", ".join(got) + (", " if got and not args else "")
    options = "".join(f" * ({s})\n" for s in signatures or SIGNATURES[name])
    return TypeError(f"{name}() received an invalid combination of arguments - got ({shown}), "
                     f"but expected one of:\n{options}")
