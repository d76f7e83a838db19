"""The backends ``torch.compile(backend=...)`` accepts, by name.

A backend turns a callable into the callable that runs in its place. ``"inductor"``, the
default, is ember's compiled mode (``replay.py``: record a call once, replay its array calls);
the debugging names (``"eager"``, ``"aot_eager"``...) run the callable as it is, which is also
what PyTorch falls back to when it cannot compile.
"""
from .exc import InvalidBackend
from .replay import record_and_replay

__all__ = ["register_backend", "lookup_backend", "list_backends"]


def eager(fn, options):
    """Run ``fn`` unchanged."""
    return fn


_BACKENDS = {}
_LISTED = set()  # the names list_backends() shows (PyTorch hides its debugging backends)


def register_backend(name, compiler, listed=True):
    """Make ``compiler(fn, options) -> callable`` the backend ``name``."""
    _BACKENDS[name] = compiler
    if listed:
        _LISTED.add(name)
    else:
        _LISTED.discard(name)


def lookup_backend(name):
    if callable(name):
        raise NotImplementedError(
            "torch.compile(backend=<a function>) is not supported by ember: a backend function "
            "receives a captured FX graph, and ember does not capture graphs (its "
            "torch.compile runs eagerly). Pass a backend name, or leave it out.")
    if name not in _BACKENDS:
        raise InvalidBackend(name)
    return _BACKENDS[name]


def list_backends(exclude_tags=("debug", "experimental")):
    """The backend names ``torch.compile`` accepts (without debugging ones by default)."""
    if exclude_tags:
        return sorted(_LISTED)
    return sorted(_BACKENDS)


register_backend("inductor", record_and_replay)
register_backend("cudagraphs", eager)
for _name in ("eager", "aot_eager", "aot_eager_decomp_partition"):
    register_backend(_name, eager, listed=False)
