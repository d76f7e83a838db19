"""ember's public op surface, declared where each function is written.

An op's public function sits directly under the op, and says where it goes::

    _hypot = defop("hypot", promote="float", jvp="elementwise", batch="pointwise",
                   method=True, inplace=True)(lambda xp, input, other: xp.hypot(input, other))
    _hypot.defvjp(...)

    @_hypot.public                      # ember.hypot, Tensor.hypot, Tensor.hypot_
    def hypot(input, other, *, out=None): ...

A function that is not one op's (a composite, a choice between overloads) declares the same
with :func:`public`::

    @public(method=True, inplace=False, aliases=("clip",))
    def clamp(input, min=None, max=None, *, out=None): ...

What a declaration says:

- ``function`` (default True): ``ember.<name>``;
- ``method`` (default True): ``Tensor.<name>`` — True for the function itself, or the method
  to bind instead (``where``'s takes the condition first; a ``property`` for ``T``);
- ``inplace`` (default False): ``Tensor.<name>_`` — True for the generic in-place form
  (the function's result written into ``self``, ``_tensor_methods.py``), or a factory
  ``inplace(fn, name) -> method`` for a form that checks more first (``div_``, ``clamp_``);
- ``aliases``: more names for the same function and its method forms (``multiply``);
- ``name``: the public name when it is not the function's ``__name__``.

:func:`array_api` adds a spelling of the array-API namespace that derivative rules use on
Tensors under ``create_graph=True`` (``axis``, ``keepdims``...).

Everything else is read off the declarations: ``FUNCTIONS`` (what ``import ember`` exports,
``ops/_exports.py``), ``METHODS`` and ``INPLACE`` (what ``_tensor_methods.py`` binds onto
``Tensor``), ``ARRAY_API`` (``_array_api.py``). A name declared twice is an error.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, overload

__all__ = ["public", "array_api", "FUNCTIONS", "METHODS", "INPLACE", "ARRAY_API"]

FUNCTIONS: dict = {}  # name -> function: ember.<name>
METHODS: dict = {}    # name -> function or property: Tensor.<name>
INPLACE: dict = {}    # name -> True or a factory: Tensor.<name>_ (see the module docstring)
ARRAY_API: dict = {}  # name -> function: the Tensor namespace's array-API spelling


def _declare(table, name, value, fn):
    if name in table:
        raise RuntimeError(f"ember: {name} is declared twice (by {table[name]!r} and "
                           f"{fn!r})")
    table[name] = value


_F = TypeVar("_F", bound=Callable[..., Any])


@overload
def public(fn: _F, *, function: bool = ..., method: Any = ..., inplace: Any = ...,
           aliases: tuple[str, ...] = ..., name: str | None = ...) -> _F: ...
@overload
def public(fn: None = ..., *, function: bool = ..., method: Any = ..., inplace: Any = ...,
           aliases: tuple[str, ...] = ..., name: str | None = ...) -> Callable[[_F], _F]: ...


def public(fn=None, *, function=True, method=True, inplace=False, aliases=(), name=None):
    """Declare ``fn`` public (see the module docstring); a decorator with or without
    arguments. Returns ``fn`` unchanged."""
    def declare(fn):
        for public_name in (name or fn.__name__, *aliases):
            if function:
                _declare(FUNCTIONS, public_name, fn, fn)
            if method is not False:
                _declare(METHODS, public_name, fn if method is True else method, fn)
            if inplace is not False:
                _declare(INPLACE, public_name, inplace, fn)
        return fn
    return declare if fn is None else declare(fn)


def array_api(name: str) -> Callable[[_F], _F]:
    """Declare the decorated function as the array API's ``name`` on Tensors."""
    def declare(fn):
        _declare(ARRAY_API, name, fn, fn)
        return fn
    return declare
