"""``torch.nn.modules.utils``: the argument helpers layers share (``_pair(3)`` is ``(3, 3)``)
and ``consume_prefix_in_state_dict_if_present``."""
from __future__ import annotations

import collections.abc
import itertools

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n, name="parse"):
    """A function making an argument ``n`` values long: an iterable becomes a tuple as it is
    (any length), anything else is repeated ``n`` times."""
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(itertools.repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """``t`` reversed with each entry repeated ``n`` times: per-dim padding ``(1, 2)`` as
    ``F.pad``'s last-dim-first ``(2, 2, 1, 1)``."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """An adaptive pool's output size with each None replaced by the input's size there
    (``defaults``, the input's shape); an int is returned as is."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strip ``prefix`` from the keys of ``state_dict`` that start with it, in place (and from
    its ``_metadata``): loads a checkpoint saved from ``DataParallel(model)`` (keys
    ``"module.…"``) into ``model``.

    Example:
        >>> sd = nn.DataParallel(nn.Linear(2, 2)).state_dict()
        >>> consume_prefix_in_state_dict_if_present(sd, "module.")
        >>> list(sd)
        ['weight', 'bias']
    """
    for key in list(state_dict):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    for key in list(metadata):
        # "" is the root module's entry; "module" (the prefix without its dot) becomes it.
        if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
            metadata[key[len(prefix):]] = metadata.pop(key)


def factory_kwargs(kwargs):
    """The ``device``/``dtype``/``memory_format`` keywords of ``kwargs`` as one dict for a
    factory call; a ``factory_kwargs`` entry adds to them. Other keys are a TypeError."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    unexpected = kwargs.keys() - simple - {"factory_kwargs"}
    if unexpected:
        raise TypeError(f"unexpected kwargs {unexpected}")
    out = dict(kwargs.get("factory_kwargs", {}))
    for key in simple:
        if key in kwargs:
            if key in out:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            out[key] = kwargs[key]
    return out
