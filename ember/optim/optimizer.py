"""``torch.optim.Optimizer``: parameter groups, per-parameter state and state dicts.

Updates run on the parameters' storage directly (no graph is recorded, as under ``no_grad``);
each optimizer's arithmetic lives in a plain function (``sgd``, ``adam`` ...) written as
PyTorch's single-tensor loop: the same in-place ops (``_add_``, ``_addcdiv_`` ... below), in
the same order, each bumping its tensor's version counter once, as PyTorch's do.
"""
from __future__ import annotations

import copy
import sys
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any, TypeVar, overload

import numpy as np

from .. import _dtypes, _recording
from .._tensor import Tensor
from ..autograd import anomaly_mode
from ..autograd.grad_mode import enable_grad, no_grad

__all__ = ["Optimizer", "required"]

_LOW_PRECISION = _dtypes.LOW_PRECISION_TYPES


class _RequiredParameter:
    """Singleton class representing a required parameter for an Optimizer."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

# Type aliases custom optimizers annotate with: what ``params`` may be, and a state dict.
ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]] | Iterable[tuple[str, Tensor]]
StateDict = dict[str, Any]
_T = TypeVar("_T")  # what a step's closure returns (the loss), and so the step


def _typename(obj):
    if isinstance(obj, Tensor):
        return "torch." + {"float32": "Float", "float64": "Double", "int64": "Long",
                           "int32": "Int", "bool": "Bool"}.get(str(obj._data.dtype), "") + "Tensor"
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


def _write(param, value):
    """Write ``value`` into ``param``'s storage in place, bumping its version counter."""
    param._data[...] = value
    anomaly_mode.note_write(param, "an optimizer's in-place update")


def _in_place(update):
    """An in-place PyTorch op on a tensor's storage: ``update(array, *args)`` overwrites the
    array (NumPy ``out=``; at most one temporary, itself updated in place), and the tensor's
    version counter goes up once."""
    name = update.__name__.strip("_") + "_"

    def op(tensor, *args):
        data = tensor._data
        if type(data.dtype) in _LOW_PRECISION:
            # bfloat16: computed in float32 and rounded once, as PyTorch's kernel for the op
            # (NumPy on the ml_dtypes arrays would round each step, and the numbers too).
            compute = _dtypes.LOW_PRECISION[data.dtype]
            work = data.astype(compute)
            update(work, *_upcast(args, data.dtype, getattr(op, "scalar_operands", ())))
            data[...] = work
        else:
            update(data, *args)
        anomaly_mode.note_write(tensor, name)
    op.__name__, op.__doc__ = update.__name__, update.__doc__
    return op


def _upcast(args, low, scalar_operands):
    """The arguments of an in-place update of a bfloat16 (``low``) tensor: arrays as float32,
    the numbers at ``scalar_operands`` rounded to bfloat16 first, as PyTorch rounds ``add_``'s
    ``alpha`` (its other kernels read numbers unrounded)."""
    compute = _dtypes.LOW_PRECISION[low]
    out = []
    for i, a in enumerate(args):
        if type(getattr(a, "dtype", None)) in _LOW_PRECISION:
            a = a.astype(compute)
        elif i in scalar_operands and isinstance(a, (int, float)):
            a = float(np.asarray(a, low).astype(compute))
        out.append(a)
    return out


def _plus(x, other, alpha):
    """``x.add(other, alpha=alpha)`` on arrays (a new array): for bfloat16 computed as
    ``_add_`` computes it, in float32 with ``alpha`` rounded, and rounded once."""
    if type(x.dtype) in _LOW_PRECISION:
        work, other, alpha = _upcast((x, other, alpha), x.dtype, (2,))
        return (work + alpha * other).astype(x.dtype)
    return x + alpha * other


def _over(x, value):
    """``x / value`` for an array and a number, as PyTorch's ``div``: for float16 and bfloat16
    computed in float32 with the number unrounded, and rounded once (NumPy would round the
    number to the array's dtype first)."""
    if type(x.dtype) in _LOW_PRECISION:
        return (x.astype(_dtypes.LOW_PRECISION[x.dtype]) / value).astype(x.dtype)
    return x / value


# The temporaries below use in-place operators, not out=: on 0-d arrays NumPy computes scalars.

@_in_place
def _add_(x, other, alpha=1):
    """``x.add_(other, alpha=alpha)``: ``x + alpha * other``.

    ``alpha * other`` needs a temporary. On a large array it is made a block at a time in one
    cache-sized buffer, so that an update reads ``x`` and ``other`` and writes ``x`` once
    instead of also writing and re-reading a temporary the size of the parameter (in a
    training step, ~2% of an MLP's time at batch 64). Each element is the same
    ``x + (alpha * other)`` either way.
    """
    if alpha == 1:
        np.add(x, other, out=x)
        return
    n = _BLOCK_BYTES // x.itemsize
    if (x.size <= n or type(x) is not np.ndarray or type(other) is not np.ndarray
            or other.shape != x.shape or other.dtype != x.dtype
            or not (x.flags.c_contiguous and other.flags.c_contiguous)):
        np.add(x, other * alpha, out=x)
        return
    x, other = x.reshape(-1), other.reshape(-1)  # views: both are contiguous
    block = np.empty(n, x.dtype)
    for i in range(0, x.size, n):
        part = x[i:i + n]
        scaled = np.multiply(other[i:i + n], alpha, out=block[:part.size])
        np.add(part, scaled, out=part)


_add_.scalar_operands = (1,)  # ``alpha``: see ``_upcast``
_BLOCK_BYTES = 256 * 1024  # half of a common L2 cache


@_in_place
def _mul_(x, value):
    """``x.mul_(value)``."""
    np.multiply(x, value, out=x)


@_in_place
def _addcmul_(x, tensor1, tensor2, value=1):
    """``x.addcmul_(tensor1, tensor2, value=value)``: ``x + value * tensor1 * tensor2``."""
    product = tensor1 * value
    product *= tensor2
    np.add(x, product, out=x)


@_in_place
def _addcdiv_(x, tensor1, tensor2, value=1):
    """``x.addcdiv_(tensor1, tensor2, value=value)``: ``x + value * tensor1 / tensor2``."""
    quotient = tensor1 * value
    quotient /= tensor2
    np.add(x, quotient, out=x)


@_in_place
def _lerp_(x, end, weight):
    """``x.lerp_(end, weight)``: PyTorch's two formulas, chosen by the weight for accuracy at
    both ends: ``x + weight * (end - x)`` or ``end - (end - x) * (1 - weight)``."""
    diff = end - x
    if abs(weight) < 0.5:
        diff *= weight
        np.add(x, diff, out=x)
    else:
        diff *= 1 - weight
        np.subtract(end, diff, out=x)


@_in_place
def _maximum_(x, other):
    """``torch.maximum(x, other, out=x)``."""
    np.maximum(x, other, out=x)


def _wrap(array):
    return Tensor._make(array, None, False)


def _step_tensor(value=0.0):
    return _wrap(np.array(value, dtype=np.float32))


def _zeros(param):
    """A state buffer of zeros shaped and typed as the tensor ``param``."""
    return _wrap(np.zeros_like(param._data))


class Optimizer:
    """Base class for all optimizers.

    Args:
        params: an iterable of Tensors or dicts (parameter groups).
        defaults: default values of the optimization options, used where a group omits them.
    """

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)  # keyed by parameter
        self.param_groups: list[dict[str, Any]] = []
        param_groups: list[Any] = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __repr__(self) -> str:
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group; options it omits take the optimizer's defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)

        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) == len(tensors):
                param_group["param_names"] = names
            else:
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len(set(params)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)

        param_set = set()
        for group in self.param_groups:
            param_set.update(set(group["params"]))
            if ("param_names" in param_group) != ("param_names" in group):
                txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {txt} to the optimizer")
        if not param_set.isdisjoint(set(param_group["params"])):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors (to ``None``, or to zeros)."""
        if _recording.state.recorder is not None:  # (compiled mode replays it as one call)
            return _recording.opaque(self._zero_grad, set_to_none)
        return self._zero_grad(set_to_none)

    def _zero_grad(self, set_to_none):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        g = p.grad
                        if g.grad_fn is not None:
                            g.detach_()
                        else:
                            g.requires_grad_(False)
                        _write(g, 0)

    @overload
    def step(self, closure: None = None) -> None: ...
    @overload
    def step(self, closure: Callable[[], _T]) -> _T: ...

    def step(self, closure=None):
        """Perform a single optimization step; subclasses implement ``_update``."""
        if _recording.state.recorder is not None:  # (compiled mode replays it as one call)
            return _recording.opaque(self._run_step, closure, None)
        return self._run_step(closure, sys._getframe(1))

    def _run_step(self, closure, caller):
        """``step``; in-place writes are reported as made at ``caller``'s line."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad(), anomaly_mode.writes_from(caller):
            for group in self.param_groups:
                self._update(group)
        return loss

    def _update(self, group):
        raise NotImplementedError

    def _stepped(self, group, init):
        """Yield ``(p, state)`` for each parameter of ``group`` that has a gradient, its
        ``step`` counter just raised by one: the per-parameter loop of the optimizers whose
        state is made lazily. On a parameter's first step its state is made: ``step`` at 0,
        then the buffers of the dict ``init(p)``, in that order (``state_dict`` keeps it)."""
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor()
                state.update(init(p))
            _add_(state["step"], 1)
            yield p, state

    # ------------------------------------------------------------------ state dicts
    def state_dict(self) -> StateDict:
        """The optimizer's state as a dict: ``state`` keyed by parameter index and
        ``param_groups`` whose ``params`` are lists of those indices."""
        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update({id(p): i for i, p in enumerate(group["params"], start_index)
                                   if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        return {"state": packed_state, "param_groups": param_groups}

    @staticmethod
    def _cast(param, value, key=None):
        if isinstance(value, Tensor):
            arr = np.array(value._data, copy=True)
            if key != "step" and param.is_floating_point():
                arr = arr.astype(param._data.dtype)
            return _wrap(arr)
        if isinstance(value, dict):
            return {k: Optimizer._cast(param, v, key=k) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(Optimizer._cast(param, v, key=key) for v in value)
        return value

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Load state from ``state_dict()``: values are copied and cast to the params' dtypes."""
        state_dict = state_dict.copy()
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state: defaultdict[Any, Any] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = self._cast(param, v)
            else:
                state[k] = v
        new_groups = []
        for group, new_group in zip(groups, saved_groups):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            new_groups.append(new_group)
        self.__setstate__({"state": state, "param_groups": new_groups})


def _grads(group, state_init):
    """Yield ``(param, grad array, state)`` for each param of ``group`` that has a gradient."""
    for p in group["params"]:
        if p.grad is None:
            continue
        state = state_init(p)
        yield p, p.grad._data, state


