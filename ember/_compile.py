"""``torch.compile``: the entry point, its checks, and the dispatch to a backend.

Arguments are checked as PyTorch checks them (a callable, a known ``mode``, not both ``mode``
and ``options``, a known ``backend``); the backend named is then looked up in
``ember._dynamo.backends``. Today every backend runs the code eagerly, as PyTorch's eager
fallback does, so results equal eager results.
"""
from __future__ import annotations

from ._dynamo.backends import lookup_backend
from ._dynamo.eval_frame import OptimizedModule, compiled_function
from .nn.module import Module

__all__ = ["compile"]

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


def compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None,  # noqa: A001
            options=None, name=None, disable=False, recompile_limit=None,
            isolate_recompiles=False, shapes_spec=None):
    """Compile ``model`` (a function or an ``nn.Module``); see the module docstring.

    Returns a function for a function, an ``OptimizedModule`` for a module, and a decorator
    when ``model`` is None (``@torch.compile(mode=...)``). With ``disable=True`` the model is
    returned unchanged.
    """
    if model is None:
        def decorator(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, name=name, disable=disable,
                           recompile_limit=recompile_limit,
                           isolate_recompiles=isolate_recompiles, shapes_spec=shapes_spec)
        return decorator
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is "
                             "provided.")
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    compiler = lookup_backend("inductor" if backend is None else backend)
    if disable:
        return model

    def backend_fn(fn):
        return compiler(fn, {"mode": mode, "options": options, "fullgraph": fullgraph,
                             "dynamic": dynamic})
    if isinstance(model, Module):
        return OptimizedModule(model, backend_fn)
    return compiled_function(model, backend_fn)
