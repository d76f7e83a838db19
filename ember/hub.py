"""``torch.hub``: models and weights published in GitHub repositories or at URLs.

ember does not reach the network, so nothing is downloaded here: ``load``/``list``/``help`` of
a GitHub repository and ``download_url_to_file`` raise a RuntimeError saying so. What works
without the network works as in PyTorch: ``load(dir, name, source='local')`` runs the entry
point of a local ``hubconf.py``, and ``load_state_dict_from_url`` loads a file already in the
hub's cache (``get_dir()/checkpoints``, the same place PyTorch keeps them).
"""
from __future__ import annotations

import importlib.util
import os
import sys
import warnings
from urllib.parse import urlparse

from .serialization import load as _load

__all__ = ["load", "list", "help", "load_state_dict_from_url", "download_url_to_file",
           "get_dir", "set_dir"]

_hub_dir = None
_NO_NETWORK = ("ember's torch.hub does not download ({what}): ember does not access the "
               "network. ")


def _torch_home():
    default = os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "torch")
    return os.path.expanduser(os.getenv("TORCH_HOME", default))


def get_dir():
    """The hub cache directory: ``set_dir``'s, else ``$TORCH_HOME/hub`` (``$TORCH_HOME``
    defaults to ``$XDG_CACHE_HOME/torch``, that to ``~/.cache/torch``)."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead",
                      stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_torch_home(), "hub")


def set_dir(d):
    """Use ``d`` as the hub cache directory."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def _hubconf(repo_dir):
    """The ``hubconf.py`` module of a local repository directory."""
    path = os.path.join(repo_dir, "hubconf.py")
    spec = importlib.util.spec_from_file_location("hubconf", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, repo_dir)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(repo_dir)
    return module


def _entry(module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    func = getattr(module, model, None)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def _check_source(source):
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    return source


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """Build ``model`` from a repository's ``hubconf.py``; only ``source='local'`` works."""
    if _check_source(source) == "github":
        raise RuntimeError(_NO_NETWORK.format(what=f"GitHub repository {repo_or_dir!r}") +
                           "Clone it and call torch.hub.load(path, model, source='local').")
    return _entry(_hubconf(repo_or_dir), model)(*args, **kwargs)


def list(github, force_reload=False, skip_validation=False, trust_repo="check",  # noqa: A001
         verbose=True):
    """The entry points of a GitHub repository: needs the network, so it raises."""
    raise RuntimeError(_NO_NETWORK.format(what=f"GitHub repository {github!r}") +
                       "Clone it and read its hubconf.py.")


def help(github, model, force_reload=False, skip_validation=False,  # noqa: A001
         trust_repo="check"):
    """An entry point's docstring from a GitHub repository: needs the network, so it raises."""
    raise RuntimeError(_NO_NETWORK.format(what=f"GitHub repository {github!r}") +
                       "Clone it and read its hubconf.py.")


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download ``url`` to ``dst``: needs the network, so it raises."""
    raise RuntimeError(_NO_NETWORK.format(what=url) + f"Download it to {dst!r} yourself.")


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    """Load the checkpoint for ``url`` from the hub cache (``get_dir()/checkpoints``, or
    ``model_dir``), where PyTorch would have downloaded it; raise when it is not there."""
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    filename = file_name or os.path.basename(urlparse(url).path)
    cached = os.path.join(model_dir, filename)
    if not os.path.exists(cached):
        raise RuntimeError(_NO_NETWORK.format(what=url) +
                           f"Download it to {cached!r} and call this again.")
    return _load(cached, map_location=map_location, weights_only=weights_only)
