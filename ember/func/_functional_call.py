"""``torch.func.functional_call``: run a module with other tensors in place of its parameters
and buffers, so that a loss becomes a function of a dict of parameters (what ``grad`` needs).

The tensors are swapped into the module's ``_parameters``/``_buffers`` (or set as plain
attributes) for the call and swapped back afterwards, also when the call raises. As in PyTorch,
a module that replaces one of them during the call (``self.count = self.count + 1``) leaves the
new value in the caller's dict, not in the module.
"""
from __future__ import annotations

import contextlib
from collections.abc import Sequence

from .._tensor import Tensor
from ..nn.module import Module

__all__ = ["functional_call"]

_MISSING = object()  # the module had no attribute of that name


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the given tensors as its parameters and buffers.

    Args:
        module: the ``nn.Module`` to call.
        parameter_and_buffer_dicts: ``{name: tensor}`` (names as in ``named_parameters()``), or
            a sequence of such dicts with distinct keys. Names left out keep the module's own.
        args: the positional arguments; anything but a tuple is the single argument.
        kwargs: the keyword arguments.
        tie_weights: tensors tied in the module (one parameter under two names) stay tied: a
            value given for one name is used for all; different values for them raise.
        strict: the names must be exactly the module's parameters and buffers.

    Example::

        >>> model = torch.nn.Linear(2, 1)
        >>> params = {"weight": torch.ones(1, 2), "bias": torch.zeros(1)}
        >>> torch.func.functional_call(model, params, (torch.tensor([1., 2.]),))
        tensor([3.])
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        tensors = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        keys = [k for d in parameter_and_buffer_dicts for k in d]
        repeated = [k for k in dict.fromkeys(keys) if keys.count(k) > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             f"functional call is ambiguous")
        tensors = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrized(module, tensors, tie_weights, strict):
        return module(*args, **kwargs or {})


def _all_names(module):
    """``{name: tensor}`` for every parameter and buffer, tied ones under each of their names."""
    return {**dict(module.named_parameters(remove_duplicate=False)),
            **dict(module.named_buffers(remove_duplicate=False))}


def _untied(module, tensors):
    """``tensors`` with a value given for one name of tied tensors given for all its names."""
    names_of = {}
    for name, tensor in _all_names(module).items():
        names_of.setdefault(id(tensor), set()).add(name)
    tied = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    given = [name for name in tensors if name in tied]
    for name in given:
        names = tied[name]
        if len(names.intersection(given)) > 1 and len({id(tensors[n]) for n in names
                                                      if n in tensors}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             f"which are tied. Consider using tie_weights=False")
    untied = dict(tensors)
    for name in given:
        untied.update(dict.fromkeys(tied[name], tensors[name]))
    return untied


def _check_keys(module, names):
    valid = set(_all_names(module))
    unexpected, missing = sorted(set(names) - valid), sorted(valid - set(names))
    errors = []
    if unexpected:
        errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if errors:
        raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t"
                           + "\n\t".join(errors))


@contextlib.contextmanager
def _reparametrized(module, tensors, tie_weights, strict):
    new = _untied(module, tensors) if tie_weights else tensors
    if strict:
        _check_keys(module, new)
    originals = {}
    try:
        for name, tensor in new.items():
            originals[name] = _swap(module, name, tensor)
        yield
    finally:
        after = {name: _swap(module, name, tensor) for name, tensor in originals.items()}
        tensors.update({k: after[k] for k in tensors if k in after})


def _submodule(module, path):
    """The module at dotted ``path`` ("" is ``module``), with PyTorch's errors."""
    done = []
    for attr in path.split(".") if path else ():
        try:
            sub = getattr(module, attr)
        except AttributeError as ex:
            raise AttributeError(f"{module._get_name()} has no attribute `{attr}`") from ex
        done.append(attr)
        if not isinstance(sub, Module):
            raise TypeError(f"submodule `{'.'.join(done)}`: {sub} is not an instance of "
                            f"torch.nn.Module")
        module = sub
    return module


def _swap(module, path, tensor):
    """Put ``tensor`` at dotted ``path`` (``_MISSING``: remove it); return what was there."""
    prefix, _, name = path.rpartition(".")
    owner = _submodule(module, prefix)
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    if name == "":
        raise KeyError('tensor name can\'t be empty string ""')
    for store in (owner._parameters, owner._buffers):
        if name in store:
            original = store[name]
            if tensor is _MISSING:
                del store[name]
            else:
                store[name] = tensor
            return original
    original = getattr(owner, name, _MISSING)
    if original is not _MISSING and original is not None and not isinstance(original, Tensor):
        raise TypeError(f"attribute `{name}`: {original} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(owner, name, tensor)
    elif hasattr(owner, name):
        delattr(owner, name)
    return original
