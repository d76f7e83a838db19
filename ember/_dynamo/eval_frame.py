"""What ``torch.compile`` returns: a function that runs the compiled code, or, for a module,
an ``OptimizedModule`` wrapping it.

``OptimizedModule`` behaves like PyTorch's: the original module is its submodule
``_orig_mod`` (so ``state_dict`` keys start with ``_orig_mod.``), attribute reads and writes
other than its own go to the original, ``training`` is the original's, and calling it calls
the original module (its hooks included) through the backend.
"""
import functools

from ..nn.module import Module

__all__ = ["OptimizedModule", "compiled_function"]


def compiled_function(fn, backend_fn):
    """``fn`` as run by a backend, keeping its name, docstring and ``__wrapped__``."""
    runner = backend_fn(fn)

    @functools.wraps(fn)
    def compiled(*args, **kwargs):
        return runner(*args, **kwargs)
    compiled._torchdynamo_orig_callable = fn
    compiled._ember_runner = runner  # (compiled mode's entries and reasons, for tests)
    return compiled


class OptimizedModule(Module):
    """A module compiled by ``torch.compile``; see the module docstring."""

    _own = frozenset({"_orig_mod", "forward", "dynamo_ctx", "_backend_fn", "_compiled_call",
                      "training"})

    def __init__(self, mod, backend_fn):
        super().__init__()
        self._modules["_orig_mod"] = mod
        object.__setattr__(self, "_backend_fn", backend_fn)

    def forward(self, *args, **kwargs):
        """Call the original module (its hooks included) through the backend. The compiled
        callable is made on first use and again if ``_orig_mod`` changes (a deep copy has
        its own module, so it compiles its own)."""
        mod = self._orig_mod
        cached = self.__dict__.get("_compiled_call")
        if cached is None or cached[0] != id(mod):
            cached = (id(mod), compiled_function(mod.__call__, self._backend_fn))
            object.__setattr__(self, "_compiled_call", cached)
        return cached[1](*args, **kwargs)

    @property
    def training(self):
        return self._orig_mod.training

    @training.setter
    def training(self, mode):
        if "_orig_mod" in self.__dict__.get("_modules", {}):
            self._orig_mod.training = mode

    def __getattr__(self, name):
        modules = self.__dict__.get("_modules")
        if modules is None or "_orig_mod" not in modules:  # not set up (yet): copy, unpickle
            raise AttributeError(name)
        if name == "_orig_mod":
            return modules["_orig_mod"]
        return getattr(modules["_orig_mod"], name)

    def __setattr__(self, name, value):
        if name in self._own or "_modules" not in self.__dict__:
            return super().__setattr__(name, value)
        return setattr(self._orig_mod, name, value)

    def __delattr__(self, name):
        if name in self._own:
            return super().__delattr__(name)
        return delattr(self._orig_mod, name)

    def __len__(self):
        try:
            return len(self._orig_mod)
        except TypeError:
            raise TypeError(f"{type(self._orig_mod).__name__} does not support len()") from None

    def __dir__(self):
        return sorted(set(dir(self._orig_mod)) | set(super().__dir__()))
