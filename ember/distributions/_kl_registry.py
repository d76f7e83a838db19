"""The registry behind ``kl_divergence(p, q)`` and ``register_kl`` (re-exported by ``kl.py``).

Implementations are registered per pair of distribution classes. A call looks up the most
specific registered pair the argument types are subclasses of (remembered per type pair); when
the most specific choice in ``p`` and the most specific in ``q`` disagree, it warns
(``RuntimeWarning``, PyTorch's text) and uses the former, as PyTorch does.
"""
from __future__ import annotations

import warnings

from .distribution import Distribution

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY = {}  # (type_p, type_q) -> function
_KL_MEMOIZE = {}  # (type(p), type(q)) -> function or NotImplemented


def register_kl(type_p, type_q):
    """Decorator registering ``fun(p, q)`` as KL(p || q) for ``type_p``/``type_q`` subclasses."""
    for name, t in (("type_p", type_p), ("type_q", type_q)):
        if not (isinstance(t, type) and issubclass(t, Distribution)):
            raise TypeError(f"Expected {name} to be a Distribution subclass but got {t}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()  # a new pair can change what an earlier lookup would pick
        return fun

    return decorator


def _more_specific(a, b):
    """Whether type pair ``a`` is at least as specific as ``b``, comparing left to right."""
    for x, y in zip(a, b):
        if not issubclass(x, y):
            return False
        if x is not y:
            break
    return True


def _most_specific(pairs):
    best = pairs[0]
    for pair in pairs[1:]:
        if _more_specific(pair, best) and pair != best:
            best = pair
    return best


def _dispatch_kl(type_p, type_q):
    matches = [(p, q) for p, q in _KL_REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return NotImplemented
    left_p, left_q = _most_specific(matches)
    right_q, right_p = _most_specific([(q, p) for p, q in matches])
    left, right = _KL_REGISTRY[left_p, left_q], _KL_REGISTRY[right_p, right_q]
    if left is not right:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left_p.__name__}, {right_q.__name__})",
                      RuntimeWarning, stacklevel=2)
    return left


def kl_divergence(p, q):
    """KL(p || q) = E_p[log p(x) - log q(x)], over the batch shape of ``p`` and ``q``."""
    key = (type(p), type(q))
    if key not in _KL_MEMOIZE:
        _KL_MEMOIZE[key] = _dispatch_kl(*key)
    fun = _KL_MEMOIZE[key]
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fun(p, q)
