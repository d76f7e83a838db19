"""``torch.amp.GradScaler``: loss scaling for mixed-precision training.

The loss is multiplied by a scale before ``backward`` so that small float16 gradients do not
flush to zero; ``step`` divides the gradients by it again ("unscales" them), skips the
optimizer step when any gradient is inf or NaN, and ``update`` adapts the scale: times
``backoff_factor`` after a skipped step, times ``growth_factor`` after ``growth_interval``
steps in a row without one.

As in PyTorch, the scale is a float32 0-d tensor (``_scale``) and the run of good steps an
int32 one (``_growth_tracker``), both made by the first ``scale`` call. A scaler for
``'cuda'`` without a GPU is disabled with PyTorch's warning and then passes everything
through: ``scale`` returns its argument, ``step`` calls ``optimizer.step()``, ``update`` does
nothing. On the CPU it is enabled (PyTorch 2.3 and later).
"""
from __future__ import annotations

import enum
import warnings
from collections import abc, defaultdict

from .. import _device, _dtypes
from .._creation import full
from ..autograd.grad_mode import no_grad

__all__ = ["GradScaler", "OptState"]


class OptState(enum.Enum):
    """Where an optimizer is in the iteration: nothing done, gradients unscaled, stepped."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


_NO_SCALE = ("This may indicate your script did not use scaler.scale(loss or outputs) earlier "
             "in the iteration.")


class GradScaler:
    """Scales the loss, unscales and checks the gradients, and adapts the scale.

    Args:
        device (str): ``'cuda'`` (default, as PyTorch) or ``'cpu'``.
        init_scale (float): the first scale (``2.0**16``).
        growth_factor (float): multiplies the scale after ``growth_interval`` good steps.
        backoff_factor (float): multiplies the scale after a step with inf/NaN gradients.
        growth_interval (int): good steps in a row before the scale grows.
        enabled (bool): False makes every method pass through.

    Example::

        >>> scaler = ember.amp.GradScaler("cpu")
        >>> scaler.scale(loss).backward()
        >>> scaler.step(optimizer)      # skipped if a gradient is inf or NaN
        >>> scaler.update()
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not _device.cuda_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None  # made by the first scale()
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_fresh_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  {_NO_SCALE}")
        if self._growth_tracker is None:
            raise AssertionError(
                f"Attempted {funcname} but _growth_tracker is None.  {_NO_SCALE}")
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        self._scale = full((), self._init_scale, dtype=_dtypes.float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=_dtypes.int32,
                                    device=dev)

    def scale(self, outputs):
        """``outputs`` (a tensor, or nested lists/tuples/iterables of them) times the scale."""
        if not self._enabled:
            return outputs

        return self._scaled(outputs)

    def _scaled(self, value):
        """``scale``'s recursion (a method: a self-calling closure is a reference cycle)."""
        if hasattr(value, "_data"):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(value.device)
            return value * self._scale.to(value.device)
        if isinstance(value, abc.Iterable):
            scaled = map(self._scaled, value)
            return type(value)(scaled) if isinstance(value, (list, tuple)) else scaled
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _unscale_grads_(self, optimizer, inv_scale, allow_fp16):
        """Multiply every gradient of ``optimizer`` by ``inv_scale`` in place; returns
        ``{device: float32 0-d tensor}``, 1.0 where some gradient is inf or NaN."""
        found = {}
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype is _dtypes.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    dev = grad.device
                    flag = found.get(dev)
                    if flag is None:
                        flag = found[dev] = full((), 0.0, dtype=_dtypes.float32, device=dev)
                    if not bool(grad.isfinite().all()):
                        flag.fill_(1.0)
                    grad.mul_(inv_scale.to(dev))
        return found

    def unscale_(self, optimizer):
        """Divide ``optimizer``'s gradients by the scale (once per step), noting inf/NaN."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()  # (1 / scale rounded once)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``unscale_`` (unless done) then ``optimizer.step(*args, **kwargs)``, skipped when a
        gradient was inf or NaN; returns what ``optimizer.step`` returned (None if skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Set the scale for the next iteration: ``new_scale`` if given, else backed off
        after a skipped step or grown after ``growth_interval`` good ones."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device or new_scale.numel() != 1 or \
                        new_scale.requires_grad is True:
                    raise AssertionError(reason)
                scale.copy_(new_scale)
        else:
            found = [flag for state in self._per_optimizer_states.values()
                     for flag in state["found_inf_per_device"].values()]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if sum(f.item() for f in found):
                scale.mul_(self._backoff_factor)
                tracker.fill_(0)
            else:
                good = tracker.item() + 1
                if good == self._growth_interval:
                    grown = scale * self._growth_factor  # (float32, as the scale)
                    if bool(grown.isfinite()):
                        scale.copy_(grown)
                    good = 0
                tracker.fill_(good)
        self._per_optimizer_states = defaultdict(_fresh_optimizer_state)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            return self._init_scale if self._scale is None else self._scale.item()
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None else \
                self._growth_tracker.item()
        return 0

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """``scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval`` and
        ``_growth_tracker``; empty when disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the "
                                     "beginning of an iteration, or at the end after "
                                     "scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = state["_growth_tracker"] = None
            state["_per_optimizer_states"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if self._enabled:
            self._per_optimizer_states = defaultdict(_fresh_optimizer_state)


def _deprecated_scaler(device, module, doc):
    """The class ``torch.<device>.amp.GradScaler`` of ``module``: ``GradScaler(device, ...)``
    that warns, as PyTorch's does, that this spelling is deprecated."""

    class Deprecated(GradScaler):
        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                     growth_interval=2000, enabled=True):
            warnings.warn(f"`torch.{device}.amp.GradScaler(args...)` is deprecated. Please use "
                          f"`torch.amp.GradScaler('{device}', args...)` instead.",
                          FutureWarning, stacklevel=2)
            super().__init__(device, init_scale=init_scale, growth_factor=growth_factor,
                             backoff_factor=backoff_factor, growth_interval=growth_interval,
                             enabled=enabled)

    Deprecated.__name__ = Deprecated.__qualname__ = "GradScaler"
    Deprecated.__module__, Deprecated.__doc__ = module, doc
    return Deprecated
