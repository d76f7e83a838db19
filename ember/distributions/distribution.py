"""``Distribution``: the base class of every distribution (PyTorch's ``torch.distributions``).

A distribution has a ``batch_shape`` (independent, differently parametrised copies) and an
``event_shape`` (the shape of one draw); a sample of ``sample_shape`` has shape
``sample_shape + batch_shape + event_shape``. Subclasses declare ``arg_constraints`` (checked
at construction) and ``support`` (checked by ``log_prob``/``cdf``) and implement what they can;
the rest raises ``NotImplementedError`` as PyTorch's base does.

Validation is on by default (``Distribution._validate_args`` is ``__debug__``, so True unless
Python runs with ``-O``), as in PyTorch 2.x; ``set_default_validate_args`` changes it.
"""
from __future__ import annotations

import warnings

from .._tensor import Size, Tensor
from ..autograd.grad_mode import no_grad
from ..ops import unary
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]

_EMPTY = Size()  # the default sample shape: one draw per batch element


def _all_true(valid):
    return bool(valid.all()) if isinstance(valid, Tensor) else bool(valid)


class Distribution:
    """The abstract base class for probability distributions."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turn argument validation on or off for distributions that don't say otherwise."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=_EMPTY, event_shape=_EMPTY, validate_args=None):
        self._batch_shape = batch_shape
        self._event_shape = event_shape
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. Please set "
                    "`arg_constraints = {}` or initialize the distribution with "
                    "`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param),
                                                             lazy_property):
                    continue  # a parameter derived from the one given: not checked
                value = getattr(self, param)
                if not _all_true(constraint.check(value)):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}")
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A new distribution with batch dims expanded to ``batch_shape`` (no data copied)."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self):
        """A dict from parameter name to the ``Constraint`` it must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The ``Constraint`` giving this distribution's support."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=_EMPTY):
        """A sample of shape ``sample_shape + batch_shape + event_shape``, without gradients."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=_EMPTY):
        """A reparameterised sample (gradients flow to the parameters), where supported."""
        raise NotImplementedError

    def sample_n(self, n):
        """``sample((n,))``, with PyTorch's deprecation warning."""
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning,
                      stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        """``exp(entropy())``."""
        return unary.exp(self.entropy())

    def _extended_shape(self, sample_shape=_EMPTY):
        """``sample_shape + batch_shape + event_shape`` as a Size."""
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(tuple(sample_shape) + tuple(self._batch_shape)
                          + tuple(self._event_shape))

    def _validate_sample(self, value):
        """Raise PyTorch's ValueError when ``value`` has the wrong shape or leaves the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_start = value.dim() - len(self._event_shape)
        if value.size()[event_start:] != self._event_shape:
            raise ValueError("The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual = value.size()
        expected = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError("Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable sample validation. "
                "Please initialize the distribution with `validate_args=False` to turn off "
                "validation.", stacklevel=2)
            return
        if not _all_true(support.check(value)):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}")

    def _expanded(self, cls, batch_shape, _instance, set_params):
        """``expand``'s frame: a bare ``cls`` (``_get_checked_instance``) whose parameters
        ``set_params(new, batch_shape)`` sets, ``batch_shape`` made a ``Size``; then its shapes
        (this event shape), set without validating, and this one's ``validate_args``."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        set_params(new, batch_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        """A bare instance for ``expand`` to fill; subclasses with their own ``__init__`` must
        override ``expand``."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        parts = []
        for name in names:
            value = self.__dict__[name]
            parts.append(f"{name}: {value if value.numel() == 1 else value.size()}")
        return f"{self.__class__.__name__}({', '.join(parts)})"
