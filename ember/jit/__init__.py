"""``torch.jit``: TorchScript, PyTorch's older compiler (deprecated in PyTorch 2.13).

ember has no TorchScript compiler: ``script`` and ``trace`` return objects that run the
original Python code eagerly, with the same results and PyTorch's deprecation warnings.
``script(module)`` returns a ``RecursiveScriptModule`` that shares the module's parameters and
buffers and prints as PyTorch's does; ``trace(module, inputs)`` runs the module once on the
example inputs, as tracing does, and returns a ``TopLevelTracedModule``. Where a trace would
freeze Python control flow on the example (PyTorch warns with a TracerWarning), ember keeps
running the Python code. TorchScript archives are not supported: ``save`` and ``load`` raise
NotImplementedError.
"""
from __future__ import annotations

import contextlib
import typing
import warnings

from ..nn.module import Module

__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "is_scripting",
           "is_tracing", "Final", "annotate", "save", "load", "freeze",
           "optimize_for_inference", "script_if_tracing", "fork", "wait", "interface",
           "Attribute", "ScriptModule", "RecursiveScriptModule", "TopLevelTracedModule",
           "TracedModule", "ScriptFunction", "Future"]

Final = typing.Final


_SWITCH = "Please switch to `torch.compile` or `torch.export`."
_USE_COMPILE = "Please use `torch.compile` instead."


def _deprecated(api, advice=_SWITCH):
    """PyTorch 2.13's DeprecationWarning for a TorchScript function."""
    warnings.warn(f"`torch.jit.{api}` is deprecated. {advice}", DeprecationWarning,
                  stacklevel=3)


class ScriptFunction:
    """A scripted or traced function: calls run the original Python function."""

    def __init__(self, fn):
        self._fn = fn
        self.name = getattr(fn, "__name__", type(fn).__name__)
        self.__name__ = self.name
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __repr__(self):
        return f"<torch.jit.ScriptFunction object at {id(self):#x}>"


class ScriptModule(Module):
    """The base class of scripted and traced modules."""


class RecursiveScriptModule(ScriptModule):
    """A scripted module: it shares the original module's parameters and buffers, holds its
    submodules scripted in turn, and has its own ``training`` flag (as in PyTorch, where
    ``scripted.eval()`` leaves the original in training mode). ``forward`` is the original
    class's ``forward`` run on this module, so it sees this module's flag and submodules;
    other attributes are read from the original."""

    _repr_name = "RecursiveScriptModule"

    def __init__(self, module):
        super().__init__()
        object.__setattr__(self, "_original", module)
        object.__setattr__(self, "original_name", type(module).__name__)
        object.__setattr__(self, "training", module.training)
        object.__setattr__(self, "_parameters", module._parameters)  # the same dicts:
        object.__setattr__(self, "_buffers", module._buffers)  # updates are seen both ways
        object.__setattr__(self, "_non_persistent_buffers_set",
                           module._non_persistent_buffers_set)
        for name, child in module._modules.items():
            self._modules[name] = None if child is None else type(self)(child)

    def forward(self, *args, **kwargs):
        return type(self._original).forward(self, *args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if "_original" not in self.__dict__:
                raise
            return getattr(self.__dict__["_original"], name)

    def __getitem__(self, index):
        children = list(self._modules.values())
        if isinstance(index, slice):
            raise NotImplementedError("ember: slicing a scripted module is not supported")
        return children[index]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def _get_name(self):
        return self._repr_name

    def extra_repr(self):
        return f"original_name={self.original_name}"

    def __repr__(self):
        if not self._modules:
            return f"{self._get_name()}({self.extra_repr()})"
        lines = [f"{self._get_name()}(", f"  {self.extra_repr()}"]
        for key, child in self._modules.items():
            text = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({key}): {text}")
        return "\n".join(lines) + "\n)"


class TracedModule(RecursiveScriptModule):
    """A traced module (printed under its original class name, as PyTorch does)."""

    def _get_name(self):
        return self.original_name


class TopLevelTracedModule(TracedModule):
    pass


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """``torch.jit.script``: a module or function that runs ``obj``'s Python code."""
    _deprecated("script")
    if isinstance(obj, ScriptModule) or isinstance(obj, type):
        return obj  # a class stays a Python class
    if isinstance(obj, Module):
        return RecursiveScriptModule(obj)
    if callable(obj):
        return ScriptFunction(obj)
    raise RuntimeError(f"Type '{type(obj)}' cannot be compiled since it inherits from "
                       "nn.Module, pass an instance instead")


_tracing = [False]


@contextlib.contextmanager
def _trace_run():
    _tracing[0] = True
    try:
        yield
    finally:
        _tracing[0] = False


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """``torch.jit.trace``: runs ``func`` once on the example inputs (as tracing does) and
    returns a module or function that runs its Python code on later inputs."""
    _deprecated("trace")
    args = example_inputs if isinstance(example_inputs, tuple) else (
        () if example_inputs is None else (example_inputs,))
    kwargs = example_kwarg_inputs or {}
    with _trace_run():
        func(*args, **kwargs)
    if isinstance(func, Module):
        return TopLevelTracedModule(func)
    return ScriptFunction(func)


def trace_module(mod, inputs, **kwargs):
    """Trace some methods of ``mod``: ``inputs`` maps a method name to its example inputs."""
    _deprecated("trace_method")
    with _trace_run():
        for method, example in inputs.items():
            getattr(mod, method)(*(example if isinstance(example, tuple) else (example,)))
    return TopLevelTracedModule(mod)


def is_scripting():
    """True inside TorchScript code: never in ember."""
    return False


def is_tracing():
    """True while ``trace`` runs the function on its example inputs."""
    return _tracing[0]


def ignore(drop=False, **kwargs):
    """Leave a function to Python (a decorator, with or without arguments)."""
    if callable(drop):
        return drop
    if drop:
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function "
                      "call on compilation. Use torch.jit.unused now. {}", FutureWarning,
                      stacklevel=2)
    return lambda fn: fn


def unused(fn):
    """Mark a function the compiler should not compile: it stays Python."""
    return fn


def export(fn):
    """Mark a method to compile besides ``forward``; nothing to do eagerly."""
    return fn


def interface(obj):
    return obj


def script_if_tracing(fn):
    return fn


def annotate(the_type, the_value):
    """Tell the compiler the type of a value; returns the value."""
    return the_value


class Attribute(typing.NamedTuple):
    """A typed module attribute for TorchScript; eagerly, a (value, type) pair."""
    value: typing.Any
    type: typing.Any


class Future:
    """The result of ``fork``: the function has already run."""

    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value

    def done(self):
        return True


def fork(func, *args, **kwargs):
    """Run ``func`` (eagerly, now) and return a future of its result."""
    _deprecated("fork", _USE_COMPILE)
    return Future(func(*args, **kwargs))


def wait(future):
    _deprecated("wait", _USE_COMPILE)
    return future.wait()


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Inline a scripted module's parameters as constants: eagerly, the module itself."""
    _deprecated("freeze", _USE_COMPILE)
    return mod


def optimize_for_inference(mod, other_methods=None):
    return mod


_NO_ARCHIVES = ("TorchScript archives are not supported by ember: it has no TorchScript "
                "compiler or interpreter. Save the state_dict with torch.save instead.")


def save(m, f, _extra_files=None):
    """Not supported (see the module docstring)."""
    _deprecated("save", "Please switch to `torch.export`.")
    raise NotImplementedError("torch.jit.save: " + _NO_ARCHIVES)


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """Not supported (see the module docstring)."""
    _deprecated("load", "Please switch to `torch.export`.")
    raise NotImplementedError("torch.jit.load: " + _NO_ARCHIVES)

