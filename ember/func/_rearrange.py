"""``torch.func.rearrange``: einops-style reordering — transpose, reshape, squeeze, unsqueeze,
stack and concatenate written as one pattern, e.g. ``"b (h w) c -> b c h w"``.

Each side of the pattern is a list of *groups*: a name is a group of one axis, ``(h w)`` a group
of several (one dim of size ``h * w``), ``()`` or ``1`` an empty group (a dim of size 1), and
``...`` stands for the dims the pattern does not name. The input is reshaped into the left
side's single axes, permuted into the right side's order and reshaped into its groups: views
and one permute, so autograd and vmap come for free.
"""
from __future__ import annotations

import math
import re

from .._tensor import Tensor
from ..ops.shape import stack

__all__ = ["rearrange", "DimensionBindError"]

_ELLIPSIS = "…"


class DimensionBindError(ValueError):
    """A group's axis sizes do not fit the dim they describe."""


def _parse(side):
    """The groups of one side: lists of axis names (``…`` for the ellipsis)."""
    groups, current = [], None
    for token in re.findall(r"\.\.\.|\(|\)|[A-Za-z_][A-Za-z0-9_]*|\d+|\S", side):
        if token == "(":
            if current is not None:
                raise ValueError("Nested parentheses are not allowed in rearrange patterns")
            current = []
        elif token == ")":
            if current is None:
                raise ValueError("Unbalanced parentheses in rearrange pattern")
            groups.append(current)
            current = None
        else:
            if token == "1":
                names = []
            elif token == "...":
                names = [_ELLIPSIS]
            elif token.isdigit() or not re.match(r"[A-Za-z_]", token):
                raise ValueError(f"Invalid axis name {token!r} in rearrange pattern")
            else:
                names = [token]
            if current is None:  # (a bare ellipsis: a tuple, its dims stay separate)
                groups.append(tuple(names) if token == "..." else names)
            else:
                current.extend(names)
    if current is not None:
        raise ValueError("Unbalanced parentheses in rearrange pattern")
    return groups


def _names(groups):
    return [n for g in groups for n in g]


def rearrange(tensor, pattern, **axes_lengths):
    """``tensor`` (or a sequence of tensors, stacked first) rearranged by ``pattern``; the
    sizes of axes that cannot be inferred go in ``axes_lengths`` (see the module docstring)."""
    if not isinstance(tensor, Tensor):
        tensor = stack(list(tensor))
    if pattern.count("->") != 1:
        raise ValueError("Pattern must contain a single '->' separator")
    left, right = (_parse(side) for side in pattern.split("->"))
    for side in (left, right):
        seen = set()
        for n in _names(side):
            if n in seen and n != _ELLIPSIS:
                raise ValueError(f"Indexing expression contains duplicate dimension '{n}'")
            seen.add(n)
    lnames, rnames = set(_names(left)), set(_names(right))
    if lnames != rnames:
        raise ValueError("Identifiers only on one side of rearrange expression (should be on "
                         f"both): {lnames ^ rnames}")
    unknown = set(axes_lengths) - lnames
    if unknown:
        raise ValueError(f"Identifiers not found in rearrange expression: {unknown}")
    if _ELLIPSIS in lnames:  # the ellipsis: one name per dim it covers
        covered = tensor.ndim - (len(left) - 1)
        dims = [f"{_ELLIPSIS}{k}" for k in range(max(covered, 0))]

        def expand(groups):
            out = []
            for g in groups:
                if isinstance(g, tuple):
                    out.extend([d] for d in dims)
                else:
                    out.append([d for n in g for d in (dims if n == _ELLIPSIS else [n])])
            return out
        left, right = expand(left), expand(right)
    if len(left) != tensor.ndim:
        raise ValueError(f"Number of dimensions in pattern ({len(left)}) must be equal to the "
                         f"number of dimensions in the tensor ({tensor.ndim})")
    sizes = dict(axes_lengths)
    for group, length in zip(left, tensor.shape):
        missing = [n for n in group if n not in sizes]
        known = math.prod(sizes[n] for n in group if n in sizes)
        if len(missing) > 1:
            raise DimensionBindError(f"cannot infer the sizes of two dimensions at once "
                                     f"{missing[0]} and {missing[1]}")
        if missing:
            if known == 0 or length % known:
                raise DimensionBindError(
                    "inferred dimension does not evenly fit into larger dimension: "
                    f"{length} vs {tuple(sizes.get(n, '?') for n in group)}")
            sizes[missing[0]] = length // known
        elif known != length:
            raise DimensionBindError(f"dimension {length} does not match the sizes "
                                     f"{tuple(sizes[n] for n in group)} of {group}")
    order = _names(left)
    x = tensor.reshape([sizes[n] for n in order])
    perm = [order.index(n) for n in _names(right)]
    if perm != sorted(perm):
        x = x.permute(*perm)
    return x.reshape([math.prod(sizes[n] for n in g) for g in right])
