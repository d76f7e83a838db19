"""``torch.func.vmap``: a function of one sample made a function of a batch.

``vmap(f)(xs)`` is ``stack([f(x) for x in xs])``, computed without the loop: ``f`` runs once, on
batched tensors (``ember/ops/batching.py``) whose every op computes all samples together.
Levels nest (``vmap(vmap(f))``), and compose with the derivative transforms (``vmap(grad(f))``
gives per-sample gradients). PyTorch's argument checks and messages are reproduced.
"""
from __future__ import annotations

import functools

from .._tensor import Tensor, _wrap_dim
from ..ops import batching
from ..ops.shape import cat
from ..utils._pytree import LeafSpec, tree_flatten, tree_unflatten

__all__ = ["vmap"]

_state = batching.state


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over a dim of its inputs: ``vmap(f)(x)[i] == f(x[i])``.

    Args:
        func: a function of tensors (and other arguments); it may return a tensor or any
            nesting of tuples, lists and dicts of tensors.
        in_dims: the dim of each input to map over: an int for all, or a tuple with one entry
            per positional argument — an int, ``None`` (not mapped: every sample sees the
            whole argument) or, for an argument that is a container, a matching container.
            Keyword arguments are never mapped.
        out_dims: where the mapped dim goes in each output (same forms; ``None`` for an output
            that does not depend on the mapped inputs).
        randomness: ``'error'`` (random ops raise), ``'same'`` (one draw shared by the batch)
            or ``'different'`` (a draw per sample).
        chunk_size: run at most this many samples at a time (less memory, more calls).

    Ops without a batching rule run once per sample and are stacked (see
    ``ember.ops.batching``): always correct, slower.

    Example::

        >>> x = torch.tensor([[1., 2.], [3., 4.]])
        >>> torch.func.vmap(torch.dot)(x, x)   # a dot product per row
        tensor([ 5., 25.])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        name = getattr(func, "__name__", repr(func))
        flat, args_spec = tree_flatten(args)
        dims = _flat_in_dims(name, in_dims, args, args_spec)
        size = _batch_size(name, in_dims, flat, dims)
        if chunk_size is None or chunk_size >= size:
            return _run(func, name, flat, args_spec, dims, kwargs, size, out_dims, randomness)
        parts = []
        for start in range(0, size, chunk_size):
            n = min(chunk_size, size - start)
            chunk = [x if d is None else x.narrow(d, start, n) for x, d in zip(flat, dims)]
            parts.append(_run(func, name, chunk, args_spec, dims, kwargs, n, out_dims,
                              randomness))
        return _concat(parts, out_dims)
    return wrapped


def _run(func, name, flat, args_spec, dims, kwargs, size, out_dims, randomness):
    """One vmap level: ``func`` on the batched inputs, its outputs unbatched at ``out_dims``."""
    level = len(_state.levels) + 1
    _state.levels.append((level, size, randomness))
    _state.depth += 1
    try:
        batched = [x if d is None else _enter(x, d, level) for x, d in zip(flat, dims)]
        output = func(*tree_unflatten(batched, args_spec), **kwargs)
        outs, out_spec = tree_flatten(output)
        out_flat_dims = _flat_out_dims(name, out_dims, output, out_spec)
        return tree_unflatten([_exit(name, o, d, level, size)
                               for o, d in zip(outs, out_flat_dims)], out_spec)
    finally:
        _state.depth -= 1
        _state.levels.pop()


def _enter(x, dim, level):
    """``x`` batched at ``level`` along its dim ``dim`` (moved in front of the sample)."""
    own = batching.levels_of(x)
    value = x._value if own else x
    nb = len(own)
    d = _wrap_dim(dim, x.ndim) + nb
    if d != nb:
        value = value.movedim(d, nb)
    return batching.wrap(value, own + (level,))


def _exit(name, out, dim, level, size):
    """An output of the function with ``level``'s batch dim made a real dim at ``dim``."""
    if dim is None:
        if isinstance(out, Tensor) and level in batching.levels_of(out):
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                             f"when out_dim is None")
        return out
    if not isinstance(out, Tensor):
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                         f"{type(out)}. Did you mean to set out_dims= to None for output?")
    levels = batching.levels_of(out)
    d = _wrap_dim(dim, out.ndim + 1)
    if level not in levels:  # the same for every sample
        out = out.unsqueeze(d)
        shape = list(out.shape)
        shape[d] = size
        return out.expand(shape)
    pos = levels.index(level)
    rest = levels[:pos] + levels[pos + 1:]
    value = out._value
    if pos != len(rest) + d:
        value = value.movedim(pos, len(rest) + d)
    return batching.wrap(value, rest)


def _prefix(arg_name, what, dims, tree, spec):
    """``dims`` (an int/None, or a container prefix of ``tree``) broadcast to its leaves."""
    if dims is None or isinstance(dims, int):
        return [dims] * len(tree_flatten(tree)[0])
    out = []
    if not _walk_prefix(dims, tree, out):
        raise ValueError(f"{what} is not compatible with the structure of `{arg_name}`. "
                         f"{what} has structure {tree_flatten(dims)[1]} but {arg_name} has "
                         f"structure {spec}.")
    return out


def _walk_prefix(d, t, out):
    """``_prefix``'s recursion (a module function: a self-calling closure is a reference
    cycle holding ``out`` until the garbage collector runs)."""
    if d is None or isinstance(d, int) or not isinstance(d, (tuple, list, dict)):
        out.extend([d] * len(tree_flatten(t)[0]))
        return True
    if type(d) is not type(t) or len(d) != len(t):
        return False
    if isinstance(d, dict):
        if set(d) != set(t):
            return False
        return all(_walk_prefix(d[k], t[k], out) for k in t)
    return all(_walk_prefix(a, b, out) for a, b in zip(d, t))


def _flat_in_dims(name, in_dims, args, spec):
    head = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): "
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"{head}expected `in_dims` to be int or a (potentially nested) tuple "
                         f"matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         f"inputs, or you are trying to vmap over a function with no inputs. "
                         f"The latter is unsupported.")
    try:
        return _prefix("inputs", "in_dims", in_dims, args, spec)
    except ValueError as e:
        raise ValueError(head + str(e)) from None


def _batch_size(name, in_dims, flat, dims):
    head = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): "
    sizes = []
    for x, d in zip(flat, dims):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(f"{head}Got in_dim={d} for an input but in_dim must be either an "
                             f"integer dimension or None.")
        if not isinstance(x, Tensor):
            raise ValueError(f"{head}Got in_dim={d} for an input but the input is of type "
                             f"{type(x)}. We cannot vmap over non-Tensor arguments, please use "
                             f"None as the respective in_dim")
        n = x.ndim
        if not -n <= d < n:
            raise ValueError(f"{head}Got in_dim={d} for some input, but that input is a Tensor "
                             f"of dimensionality {n} so expected in_dim to satisfy -{n} <= "
                             f"in_dim < {n}.")
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _flat_out_dims(name, out_dims, output, spec):
    if not (out_dims is None or isinstance(out_dims, (int, tuple, list, dict))):
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, "
                         f"None or a python collection of ints representing where in the "
                         f"outputs the vmapped dimension should appear.")
    if isinstance(out_dims, (tuple, list)) and len(out_dims) == 1 and isinstance(spec, LeafSpec):
        out_dims = out_dims[0]  # PyTorch accepts (d,) for a single output
    try:
        return _prefix("outputs", "out_dims", out_dims, output, spec)
    except ValueError as e:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): {e}") from None


def _concat(parts, out_dims):
    """The chunks' outputs joined along their out_dims."""
    first, spec = tree_flatten(parts[0])
    dims = _prefix("outputs", "out_dims", out_dims, parts[0], spec)
    columns = zip(*(tree_flatten(p)[0] for p in parts))
    joined = [col[0] if d is None else cat(list(col), d) for col, d in zip(columns, dims)]
    return tree_unflatten(joined, spec)
