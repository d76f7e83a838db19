"""A value that one derivative rule of a node computes and another rule of the same node, in
the same backward, would compute again: solve's ``A^-T g`` (the gradient for ``B`` and the
first step of the one for ``A``), attention's score gradient (for the query and the key), a
norm's sums of ``g`` and ``g * xhat`` (the input's gradient needs them; they are the weight's
and the bias's). Computing it twice would be a second factorisation or a second pass.

The engine runs a node's rules in input order, one straight after the other, on the same
``g``. The first rule to need the value ``leave``\\ s it in a ``holder`` (the node's ``saved``
dict, or a module's own dict for ops that have none) under a key of objects compared by
identity (``g``, and the node's output where the holder is shared by nodes); a later rule
``take``\\ s it if the key is its own, else gets None and computes. Another backward has
another ``g``, another node another output, so a value is read only by the rules of the
backward it was computed in. A holder keeps one value, until the next ``leave`` or the
``take`` that ends it (``last``). Rules recorded under ``create_graph`` get Tensors and must
stay expressions of their inputs: nothing is left or taken then.
"""
from __future__ import annotations

from .. import _array_api

_SLOT = "between_rules"


def leave(xp, holder, key, value):
    """Leave ``value`` in ``holder`` for the node's next rules, under ``key`` (a tuple)."""
    if not _array_api.is_tensor_namespace(xp):
        holder[_SLOT] = (key, value)


def take(xp, holder, key, last=True):
    """The value left under ``key`` in ``holder``, or None; ``last``: no later rule needs it
    (the holder lets it go)."""
    entry = holder.get(_SLOT)
    if entry is None or _array_api.is_tensor_namespace(xp):
        return None
    mine = len(entry[0]) == len(key) and all(a is b for a, b in zip(entry[0], key))
    if last or not mine:  # (another backward's value is let go: nothing will read it)
        del holder[_SLOT]
    return entry[1] if mine else None
