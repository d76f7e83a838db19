"""What ``vmap`` runs on: batched tensors, and how each op computes on a whole batch at once.

Inside ``ember.func.vmap(f)`` the function ``f`` sees one sample of each mapped input; ember
hands it a :class:`BatchedTensor`. That is a *logical* view of a plain *physical* tensor whose
leading dims are the batch dims of the vmap levels it varies over (outermost level first) and
whose remaining dims are the sample that ``f`` sees: ``shape``, ``dim()``, ``numel()`` and
printing report the sample; the data underneath is the whole batch.

An op called with a batched argument (the vmap interposer, ``_dispatch.py``, asks :func:`call`) runs
once on the physical tensors, by the *batching rule* its declaration names
(``defop(..., batch=...)``), one of the kinds here or a function written beside the op:

- ``"pointwise"``: the batched inputs are lined up (a size-1 dim for a level an input does not
  vary over, size-1 dims where its sample has fewer dims), so broadcasting does the rest;
- ``"moved"`` (or :func:`moved` with what the op's parameters mean beyond their names): dim,
  shape and index parameters moved past the batch dims (``dim=0`` becomes ``dim=1``, shape
  ``(3, 4)`` becomes ``(B, 3, 4)``, index ``[i]`` becomes ``[:, i]``): reductions, softmax,
  views, slicing, sorting, ...; :func:`whole` for reductions of the whole sample;
- ``"unchanged"``: ops that already map over leading dims (``tril``, the decompositions);
- ``"matmul"``: the matmul family, one broadcasting ``matmul`` of the lined-up operands;
- ``"fold"``: nn layers with a batch of their own (pooling, group norm) fold the vmap batch
  into theirs; ``"loss"``: pointwise losses, elementwise then each sample's mean or sum;
- a function ``rule(op, args, levels)`` beside the op, built from the helpers here
  (:func:`physical`, :func:`wrap`, :func:`single`, :func:`shift`, ...): ``cat``/``stack``,
  ``t``, ``copy``/``fill``, ``cross``, ``dist``, convolution (a weight per sample is one
  grouped convolution), layer norm, batch norm;
- ``"loop"``, the explicit opt-in to :func:`loop`: the op runs on each sample and the results
  are stacked — correct for every op, one call per sample; ``fallbacks`` counts them per op.
  Indexing writes (``index_put_``, ``scatter*``, ``index_add/copy/fill``, ``put``, ``take``,
  ``masked_scatter``), ``solve``, padding and upsampling, and the backward ops (reached by
  double backward) loop; so do the kinds above where they say (a batched argument past the
  first for :func:`single` rules, dim arguments of 0-d samples, batch norm in training).

An op that declares no rule refuses under vmap (the tests check that every op declares one).
Functions that read a tensor argument as raw data (an index, a mask, a target) are decorated
with :func:`per_sample`, and have a rule of their own where it matters: ``x[i]`` with per-sample
index tensors (``indexing.reading._getitem_batched``: the batch dims indexed by aranges), ``where``,
``masked_fill``, ``nll_loss``, ``embedding``.

The rules call ordinary ops on the physical tensors, so autograd records the batched
computation itself: backward needs no batched derivative rules. ``func.grad`` inside ``vmap``
makes the tensors it differentiates vary over every active level (an unbatched parameter is
expanded, without copying), so per-sample gradients come out per sample instead of summed.
"""
from __future__ import annotations

import collections
import math
from operator import attrgetter

import numpy as np

from .. import _dispatch, _dtypes, _errors, _memory_format
from .._tensor import Size, Tensor, _wrap_dim
from ..autograd.graph import gradient_edge

__all__ = ["BatchedTensor", "call", "loop", "fallbacks", "state"]

state = _dispatch.vmap  # the running levels (``_dispatch.py``)
fallbacks = collections.Counter()  # op name -> calls that ran the per-sample loop


class BatchedTensor(Tensor):
    """A sample's view of a batch (see the module docstring): ``_value`` is the physical tensor,
    ``_levels`` the vmap levels whose batch dims lead it, in order. Autograd state (data,
    ``grad_fn``, version counter, ...) is the physical tensor's: the attributes forward to it."""

    __slots__ = ("_value", "_levels")

    # ------------------------------------------------------------------ the logical sample
    @property
    def shape(self):
        return Size(self._value._data.shape[len(self._levels):])

    def size(self, dim=None):
        shape = self.shape
        return shape if dim is None else shape[_wrap_dim(dim, len(shape))]

    @property
    def ndim(self):
        return self._value._data.ndim - len(self._levels)

    def dim(self):
        return self.ndim

    ndimension = dim

    def numel(self):
        return math.prod(self.shape)

    nelement = numel

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def is_same_size(self, other):
        return self.shape == other.shape

    def stride(self, dim=None):
        st = self._value.stride()[len(self._levels):]
        return st if dim is None else st[_wrap_dim(dim, len(st))]

    def is_contiguous(self, memory_format=None):
        if memory_format is not None and memory_format is not _memory_format.contiguous_format:
            raise RuntimeError("NYI: querying is_contiguous inside of vmap for memory_format "
                               "other than torch.contiguous_format")
        strides = self._value.stride()[len(self._levels):]
        return strides == _memory_format.contiguous_strides(self.shape)

    # ------------------------------------------------------------------ no values per sample
    def item(self):
        raise RuntimeError(_errors.VMAP_ITEM)

    def _scalar(self):
        raise RuntimeError(_errors.VMAP_ITEM)

    def __index__(self):
        raise RuntimeError(_errors.VMAP_ITEM)

    def __format__(self, spec):
        return object.__format__(self, spec) if spec else repr(self)

    def __bool__(self):
        raise RuntimeError(_errors.VMAP_CONTROL_FLOW)

    def tolist(self):
        raise RuntimeError(_errors.NO_STORAGE)

    def numpy(self, *, force=False):
        raise RuntimeError(_errors.NO_STORAGE)

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(_errors.NO_STORAGE)

    def __repr__(self, *, tensor_contents=None):
        # PyTorch nests one BatchedTensor per level, innermost (newest) outside.
        text = repr(self._value)
        for level in self._levels:  # vmap moved each batch dim to the front: bdim is 0
            body = "\n".join("    " + line for line in text.splitlines())
            text = f"BatchedTensor(lvl={level}, bdim=0, value=\n{body}\n)"
        return text

    __str__ = __repr__

    # ------------------------------------------------------------------ autograd
    def detach(self):
        return wrap(self._value.detach(), self._levels)

    @property
    def data(self):
        return wrap(self._value.data, self._levels)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        raise RuntimeError(_errors.BACKWARD_IN_TRANSFORM)

    def _assign(self, result, name=None):
        """An in-place write, done on the physical tensor: ``result`` lined up with this
        tensor's levels first (an unbatched result is expanded; a result batched where this
        tensor is not keeps its shape, and the write fails with PyTorch's shape error)."""
        levels = self._levels
        value = self._value
        if not set(levels_of(result)) <= set(levels):
            result = result._value
        else:
            result = physical(result, levels, expand=True)
        node = result._grad_fn
        if value._rg and (node is None or value._base is not None and
                          node.next_functions[0] != gradient_edge(value)):
            # A write is recorded as an op applied to the tensor written (its first input):
            # a result made otherwise (the per-sample loop, a matmul, a fill with a constant)
            # is copied in by one.
            from .indexing.writing import (
                _copy,  # lazy: the op families import batching (per_sample)
            )
            result = _copy(value, result)
        Tensor._assign(value, result, name)
        return self


def _forward(name):
    get = attrgetter("_value." + name)
    return property(get, lambda self, value: setattr(self._value, name, value))


def _get_tangent(self):
    tangent = self._value._fw
    return None if tangent is None else wrap(tangent, self._levels)


def _set_tangent(self, tangent):  # forward AD: the tangent of each sample, kept physically
    self._value._fw = None if tangent is None else physical(tangent, self._levels, expand=True)


BatchedTensor._fw = property(_get_tangent, _set_tangent)

for _name in ("_data", "_rg", "_grad_fn", "_grad", "_vc", "_output_nr", "_base", "_view_fn",
              "_creation_meta", "_acc", "_hooks", "_retains_grad", "_vv"):
    setattr(BatchedTensor, _name, _forward(_name))


# ---------------------------------------------------------------------------- levels


def wrap(value, levels):
    """The BatchedTensor over the physical ``value`` (a plain Tensor); ``value`` itself when it
    varies over no level."""
    if not levels:
        return value
    t = object.__new__(BatchedTensor)
    t._value = value
    t._levels = tuple(levels)
    return t


def levels_of(x):
    return x._levels if type(x) is BatchedTensor else ()


def batch_size(level):
    for lv, size, _ in state.levels:
        if lv == level:
            return size
    raise RuntimeError(f"vmap: level {level} is not active")  # a BatchedTensor that escaped


def physical(x, levels, rank=None, expand=False):
    """``x`` (a tensor, batched or not) as a plain tensor with one leading dim per level of
    ``levels`` — its batch dim, or size 1 (the batch size with ``expand``) where it does not
    vary over that level — and then its sample, with leading size-1 dims up to ``rank`` dims."""
    own = levels_of(x)
    value = x._value if own else x
    sample = tuple(x.shape)
    lead = []
    dims = iter(value.shape[:len(own)])
    for level in levels:
        lead.append(next(dims) if level in own else 1)
    pad = (1,) * (rank - len(sample)) if rank is not None and rank > len(sample) else ()
    if expand and not own:  # ``expand`` adds the leading dims itself: one op, not two
        full = tuple(batch_size(level) for level in levels) + pad + sample
        return value if full == tuple(value.shape) else value.expand(full)
    shape = tuple(lead) + pad + sample
    if tuple(value.shape) != shape:
        value = value.reshape(shape)
    if expand:
        full = tuple(batch_size(level) for level in levels) + pad + sample
        if full != shape:
            value = value.expand(full)
    return value


def over_all_levels(x):
    """``x`` varying over every running vmap level (expanded where it does not: no copy)."""
    levels = tuple(level for level, _, _ in state.levels)
    return wrap(physical(x, levels, expand=True), levels)


def _reorder(value, have, want):
    """``value``, whose leading dims are the batch dims of the levels ``have`` (in that order),
    with them permuted into the order ``want``."""
    perm = [have.index(level) for level in want]
    if perm != sorted(perm):
        value = value.permute(*perm, *range(len(perm), value.ndim))
    return value


def as_seed(g, out_levels):
    """A gradient for an output batched at ``out_levels``, from ``g`` which varies over more
    levels (a vmap over cotangents, as in ``jacrev``): batched at those extra levels only, its
    sample is the output's physical shape — the graph was recorded on physical tensors."""
    union = tuple(sorted(set(out_levels) | set(levels_of(g))))
    extra = tuple(level for level in union if level not in out_levels)
    value = physical(g, union, expand=True)
    return wrap(_reorder(value, union, extra + tuple(out_levels)), extra)


def from_seed(g, in_levels):
    """The gradient of an input batched at ``in_levels`` from the backward's result ``g``
    (plain and physical, or batched at extra levels as ``as_seed`` makes them)."""
    extra = levels_of(g)
    if not extra:
        return wrap(g, in_levels)
    have = extra + tuple(in_levels)
    union = tuple(sorted(have))
    return wrap(_reorder(g._value, have, union), union)


def _union(args):
    """The levels any of ``args`` (or the tensors in a list/tuple argument) varies over."""
    found = set()
    for a in args:
        if type(a) is BatchedTensor:
            found.update(a._levels)
        elif type(a) in (list, tuple):
            for b in a:
                if type(b) is BatchedTensor:
                    found.update(b._levels)
    return tuple(sorted(found))


def _wrap_result(out, levels):
    if isinstance(out, tuple):
        return type(out)(*(wrap(o, levels) for o in out)) if hasattr(out, "_fields") else \
            tuple(wrap(o, levels) for o in out)
    return wrap(out, levels)


def is_batched(*args):
    """Whether vmap is running and any of ``args`` is a batched tensor."""
    return bool(state.depth) and any(type(a) is BatchedTensor for a in args)


# ---------------------------------------------------------------------------- the dispatch


def call(op, args):
    """``op(*args)`` when an argument is batched (NotImplemented otherwise): by the op's rule."""
    levels = _union(args)
    if not levels:
        return NotImplemented
    rule = _RULES.get(op)
    if rule is None:
        rule = _RULES[op] = _rule_for(op)
    return rule(op, args, levels)


def loop(fn, args, kwargs=None, levels=None, name=None):
    """``fn(*args, **kwargs)`` one sample at a time, the results stacked: the fallback for
    anything without a batching rule. Batched arguments may sit in lists, tuples and dicts."""
    from ..utils._pytree import tree_flatten, tree_unflatten  # lazy: utils imports ops
    kwargs = kwargs or {}
    leaves, spec = tree_flatten((list(args), kwargs))
    levels = levels or _union(leaves)
    sizes = tuple(batch_size(level) for level in levels)
    n = math.prod(sizes)
    fallbacks[name or getattr(fn, "__name__", repr(fn))] += 1
    flat = [physical(a, levels, expand=True).reshape((n,) + tuple(a.shape))
            if type(a) is BatchedTensor else None for a in leaves]
    results = []
    for i in range(n):
        # each sample a copy (an index, not a view): an in-place write of the stacked result
        # into the batch must not invalidate what the per-sample ops saved
        sample = [a if f is None else f[[i]][0] for a, f in zip(leaves, flat)]
        a, k = tree_unflatten(sample, spec)
        results.append(fn(*a, **k))
    from .shape import stack  # lazy: the op families import batching (per_sample)
    first = results[0]
    if isinstance(first, Tensor):
        return wrap(stack(results).reshape(sizes + tuple(first.shape)), levels)
    outs = [wrap(stack([r[j] for r in results]).reshape(sizes + tuple(o.shape)), levels)
            if isinstance(o, Tensor) else o for j, o in enumerate(first)]
    return type(first)(*outs) if hasattr(first, "_fields") else type(first)(outs)


def per_sample(fn, rule=None):
    """Decorate a function whose tensor arguments it reads as raw data (index tensors, masks,
    targets): under vmap with a batched argument it runs ``rule(fn, *args, **kwargs)`` (or
    the per-sample :func:`loop`) instead."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if state.depth and (_union(args) or _union(kwargs.values())):
            if rule is not None:
                return rule(fn, *args, **kwargs)
            return loop(fn, args, kwargs)
        return fn(*args, **kwargs)
    return wrapper


def lined_up(fn, *args, **kwargs):
    """A batching rule for functions whose tensor arguments broadcast together (``where``):
    the batched ones lined up (see :func:`physical`), then one call on the whole batch."""
    tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
    levels = _union(tensors)
    rank = max(t.ndim for t in tensors)

    def line_up(a):
        return physical(a, levels, rank) if type(a) is BatchedTensor else a
    return wrap(fn(*map(line_up, args), **{k: line_up(v) for k, v in kwargs.items()}), levels)


def lined_up_first(fn, input, *args, **kwargs):
    """``lined_up`` for functions whose result has the first argument's shape (masked_fill):
    the first argument is expanded to the whole batch. (A batched third argument, the fill
    value, loops.)"""
    if len(args) > 1 and type(args[1]) is BatchedTensor:
        return loop(fn, (input, *args), kwargs)
    levels = _union((input, *args, *kwargs.values()))
    full = wrap(physical(input, levels, max(input.ndim, 0), expand=True), levels)
    return lined_up(fn, full, *args, **kwargs)


def per_sample_with(rule):
    """``per_sample`` as a decorator with a batching rule."""
    return lambda fn: per_sample(fn, rule)


def reads_data(position, name):
    """``per_sample_with`` for a function that reads the argument at ``position`` (or keyword
    ``name``: an index, a mask, a tuple of indices) as data: batched, the function runs per
    sample (:func:`loop`; read whole, a batch of indices would index every sample); otherwise
    the function runs as it is, its ops by their own rules."""
    def rule(fn, *args, **kwargs):
        data = args[position] if len(args) > position else kwargs.get(name)
        if _union((data,)):
            return loop(fn, args, kwargs)
        return fn(*args, **kwargs)
    return per_sample_with(rule)


def random_batch():
    """The levels (and their sizes) a fresh random tensor varies over: the innermost run of
    ``randomness='different'`` levels, outermost first (none under 'same')."""
    levels = [(lv, size) for lv, size, mode in state.levels if mode == "different"]
    return tuple(lv for lv, _ in levels), tuple(size for _, size in levels)


# ---------------------------------------------------------------------------- the kinds
# Each op declares its rule: ``defop(..., batch=<kind>)``, a kind below by name or a function
# ``rule(op, args, levels)`` written beside the op (``convolution``, ``cat``, ``t``, ...) from
# the helpers here. ``"loop"`` is the explicit opt-in to the per-sample loop.

def loop_rule(op, args, levels):
    """``batch="loop"``: the op once per sample (:func:`loop`)."""
    return loop(op, args, levels=levels, name=op.name)


def pointwise(op, args, levels, like_first=False):
    """``batch="pointwise"``, elementwise ops: batched inputs lined up so that broadcasting pairs
    the samples. ``like_first``: the result has the first input's shape (copy, fill): it is
    expanded."""
    n_in = op.n_in
    inputs = args[:n_in]
    rank = max((a.ndim for a in inputs if isinstance(a, Tensor)), default=0)
    new = list(args)
    cast = None
    if op.promote:
        cast = _dtypes.result_type(*(a for a in inputs if a is not None))
        if op.promote == "float" and cast.category < 2:
            cast = _dtypes.get_default_dtype()
    for i, a in enumerate(inputs):
        if isinstance(a, Tensor):
            if type(a) is BatchedTensor or (like_first and i == 0):
                a = physical(a, levels, rank, expand=like_first and i == 0)
            if cast is not None and a.dtype != cast:
                a = a.to(cast)
            new[i] = a
    return wrap(op(*new), levels)


def single(fn):
    """A rule for ops whose only batched argument is the first input: ``fn(op, x, value, params,
    nb, batch, levels)`` gets its physical tensor ``value``, the number ``nb`` of batch dims and
    their sizes ``batch``; other batched inputs loop."""
    def rule(op, args, levels):
        x = args[0]
        if type(x) is not BatchedTensor or any(type(a) is BatchedTensor for a in args[1:]):
            return loop_rule(op, args, levels)
        value = physical(x, levels)
        nb = len(levels)
        return fn(op, x, value, list(args[1:]), nb, tuple(value.shape[:nb]), levels)
    return rule


def shift(d, ndim, nb):
    """Dim ``d`` of a sample of ``ndim`` dims, as a dim of the physical tensor."""
    return _wrap_dim(d, ndim) + nb


def flat(value, nb):
    """The physical ``value`` with each sample flattened: ``(*batch, -1)``."""
    return value.reshape(tuple(value.shape[:nb]) + (-1,))


_DIM_NAMES = {"dim", "dims", "axis", "dim0", "dim1", "dim2"}


def moved(*, new_dim=False, scalar_ok=False, rank_from=None, permutation=False,
          dim_required=False, flat_without=None, advanced_index=False):
    """``batch="moved"`` (``moved()``), ops with dim, shape or index parameters: the parameters
    moved past the batch dims (``dim=0`` becomes ``dim=1``, shape ``(3, 4)`` becomes ``(B, 3,
    4)``, index ``[i]`` becomes ``[:, i]``). What an op's parameters mean beyond their names it
    declares:

    - ``new_dim``: its dims count the result's dims, one more than the sample's
      (``unsqueeze``, ``diag_embed``); ``scalar_ok``: a 0-d sample is fine (else it loops:
      each op special-cases dim 0 of a 0-d tensor);
    - ``rank_from``: the sample first gets leading size-1 dims up to this parameter's length
      (``expand``'s shape, ``repeat``'s repeats, the shape a read broadcasts its input to);
    - ``permutation``: ``dims`` is a whole permutation (``permute``): the batch dims lead it;
    - ``dim_required``: without a ``dim`` it loops (``argmax`` of the flattened sample);
    - ``flat_without``: without this parameter it runs on the flattened sample (``roll``);
    - ``advanced_index``: NumPy's placement of separated advanced indices is undone (``x[i]``).
    """
    def rule(op, x, value, params, nb, batch, levels):
        names = op.argnames[op.n_in:]
        values = dict(zip(names, params))
        if (dim_required and values.get("dim") is None) or (
                x.ndim == 0 and not scalar_ok and set(names) & _DIM_NAMES):
            return loop_rule(op, (x,) + tuple(params), levels)
        if flat_without is not None and values[flat_without] is None:
            k = names.index(flat_without)
            return wrap(op(flat(value, nb), *params[:k], -1, *params[k + 1:]).reshape(
                value.shape), levels)
        if rank_from is not None:
            value = physical(x, levels, rank=len(values[rank_from]))
        return _move_params(op, x, value, params, nb, batch, levels, 1 if new_dim else 0,
                            permutation, advanced_index)
    return single(rule)


def _move_params(op, x, value, params, nb, batch, levels, extra, permutation, advanced_index):
    """The op on the physical tensor, its dim/shape/index parameters moved past the batch."""
    ndim = x.ndim + extra
    names = op.argnames[op.n_in:]
    for k, (name, p) in enumerate(zip(names, params)):
        if name in ("dim", "dim0", "dim1", "dim2", "axis"):
            if isinstance(p, int):
                params[k] = shift(p, ndim, nb)
            elif isinstance(p, (tuple, list)):
                params[k] = tuple(shift(d, ndim, nb) for d in p)
            elif p is None and name == "axis":
                params[k] = tuple(range(nb, nb + x.ndim))
        elif name == "dims":
            if permutation:
                params[k] = tuple(range(nb)) + tuple(shift(d, ndim, nb) for d in p)
            elif p is None:
                params[k] = tuple(range(nb, nb + x.ndim))
            elif isinstance(p, int):
                params[k] = shift(p, ndim, nb)
            else:
                params[k] = tuple(shift(d, ndim, nb) for d in p)
        elif name == "in_shape":  # the input's shape (for the backward)
            params[k] = tuple(value.shape)
        elif name in ("shape", "input_size") and isinstance(p, tuple):
            params[k] = batch + tuple(p)
        elif name == "key":
            params[k] = (slice(None),) * nb + (p if isinstance(p, tuple) else (p,))
        elif name == "repeats":
            params[k] = (1,) * nb + tuple(p)
        elif name == "index" and hasattr(p, "ndim"):  # take_along_dim's gather: broadcast
            params[k] = p.reshape((1,) * nb + p.shape)
    out = op(value, *params)
    if advanced_index:
        out = _advanced_first(out, params[0][nb:], nb)
    return _wrap_result(out, levels)


def _advanced_first(out, key, nb):
    """NumPy puts the dims of separated advanced indices first, ahead of the batch dims: move
    the batch dims back to the front."""
    arrays = [i for i, k in enumerate(key) if hasattr(k, "ndim") or isinstance(k, list)]
    if not arrays or arrays == list(range(arrays[0], arrays[-1] + 1)):
        return out
    lead = np.broadcast_shapes(*(np.shape(key[i]) for i in arrays))
    first = len(lead)
    return out.movedim(tuple(range(first, first + nb)), tuple(range(nb)))


def whole(reduce):
    """The rule of an op that reduces the whole sample (``sum`` without a dim):
    ``reduce(value, nb, params)`` does it on the physical tensor (usually on ``flat(value,
    nb)``)."""
    return single(lambda op, x, value, params, nb, batch, levels: wrap(
        reduce(value, nb, params), levels))


def _unchanged(op, x, value, params, nb, batch, levels):
    """``batch="unchanged"``: ops that already map over leading dims (tril, the linalg
    decompositions)."""
    return _wrap_result(op(value, *params), levels)


def dtype_of(np_dtype):
    """ember's dtype for a NumPy dtype parameter (or None)."""
    return None if np_dtype is None else _dtypes.from_numpy_dtype(np.dtype(np_dtype))


def _matmul_family(op, args, levels):
    """``batch="matmul"``: mm, bmm, mv, dot, vdot and the ``add*`` forms, each as matrix
    products of the lined-up operands (:func:`_product`). (``@`` is ``matmul``: this module
    cannot import the op families, which import it.)"""
    name = op.name
    if name in ("mm", "bmm", "mv", "dot", "vdot"):
        a, b = args[:2]
        if name == "vdot" and a.is_complex():
            a = a.conj()
        out = _product(a, b, levels, name)
    else:  # addmm, addmv, baddbmm, addr: beta * input + alpha * product
        input, m1, m2, beta, alpha = args[:5]
        if name == "addr":
            prod = _p(m1, levels, 1).unsqueeze(-1) * _p(m2, levels, 1).unsqueeze(-2)
        else:
            prod = _product(m1, m2, levels, {"addmm": "mm", "addmv": "mv"}.get(name, "bmm"))
        if not levels_of(m1) and not levels_of(m2):  # only ``input`` varies: expand
            prod = prod.expand(tuple(batch_size(lv) for lv in levels) + tuple(prod.shape))
        if alpha != 1:
            prod = prod * alpha
        if beta == 0:
            out = prod
        else:
            base = _p(input, levels, {"addmv": 1, "baddbmm": 3}.get(name, 2))
            out = prod + (base if beta == 1 else base * beta)
    return wrap(out, levels)


def _p(a, levels, rank):
    return physical(a, levels, rank) if type(a) is BatchedTensor else a


def _product(a, b, levels, kind):
    """The physical product of the samples ``a`` and ``b`` for the op ``kind`` (``mm``:
    matrices, ``mv``: matrix and vector, ``dot``/``vdot``: vectors, ``bmm``: stacks).

    Where one operand is the same for every sample, the batch is folded into the other's rows
    (or columns) and the product is one GEMM, not a matrix-vector product per sample: NumPy's
    broadcasting ``matmul`` loops over the batch, and a batch of vectors against one matrix
    (``jacrev``/``jacfwd`` pushing a basis through ``W @ x``) runs ~10x faster as one GEMM."""
    nb = len(levels)
    batched_a, batched_b = type(a) is BatchedTensor, type(b) is BatchedTensor
    if kind == "bmm" or batched_a == batched_b:  # a product per sample (or none batched)
        if nb == 1 and batched_a and kind in ("mm", "mv"):  # one level: bmm itself (fewer ops
            pb = physical(b, levels)                          # than matmul's broadcasting)
            out = physical(a, levels).bmm(pb if kind == "mm" else pb.unsqueeze(-1))
            return out if kind == "mm" else out.squeeze(-1)
        if kind in ("mm", "bmm"):
            return _p(a, levels, a.ndim) @ _p(b, levels, b.ndim)
        if kind == "mv":
            return (_p(a, levels, 2) @ _p(b, levels, 1).unsqueeze(-1)).squeeze(-1)
        return (_p(a, levels, 1) * _p(b, levels, 1)).sum(-1)
    if batched_a:  # rows of samples against one matrix (or vector): one product
        value = physical(a, levels)
        if not _rows_fold(value):  # (an expand: the stride-0 product is computed once)
            return value @ b
        lead = tuple(value.shape[:nb]) + tuple(value.shape[nb:-1])
        rows = value.reshape(-1, value.shape[-1])
        return (rows @ b).reshape(lead + tuple(b.shape[1:]))
    value = physical(b, levels)  # one matrix (or vector) against samples
    batch = tuple(value.shape[:nb])
    if kind == "mv":  # (B, k) @ A.T
        return value.reshape(-1, value.shape[-1]).matmul(a.mT).reshape(batch + (a.shape[0],))
    if kind in ("dot", "vdot"):
        return value.reshape(-1, value.shape[-1]).matmul(a).reshape(batch)
    # mm: each sample's k x m matrix as m rows, (B * m, k) @ A.T, then back to (B, n, m)
    k, m = value.shape[-2:]
    rows = value.mT.reshape(-1, k).matmul(a.mT)
    out = rows.reshape(batch + (m, a.shape[0])).mT
    return out if m == 1 else out.contiguous()


def _rows_fold(t):
    """Whether ``t``'s dims before the last flatten into one without a copy."""
    dims = [(n, st) for n, st in zip(t.shape[:-1], t.stride()[:-1]) if n != 1]
    return all(st == n * st_next for (_, st), (n, st_next) in zip(dims, dims[1:]))


def _loss(op, args, levels):
    """``batch="loss"``, a pointwise loss (input, target, reduction, ...): elementwise losses,
    then each sample's mean or sum."""
    input, target, *params = args
    names = op.argnames[2:]
    reduction = params[names.index("reduction")]
    rank = max(input.ndim, target.ndim)
    params[names.index("reduction")] = "none"
    out = op(physical(input, levels, rank), physical(target, levels, rank), *params)
    nb = len(levels)
    if reduction != "none":
        dims = tuple(range(nb, out.ndim))
        out = (out.mean(dims) if reduction == "mean" else out.sum(dims)) if dims else out
    return wrap(out, levels)


def _fold(op, x, value, params, nb, batch, levels):
    """``batch="fold"``, nn layers with a batch dim of their own (N, C, ...): the vmap batch
    folded into N."""
    out = op(value.reshape((-1,) + tuple(x.shape[1:])), *params)
    return wrap(out.reshape(batch + (x.shape[0],) + tuple(out.shape[1:])), levels)


fold = single(_fold)
KINDS = {"pointwise": pointwise, "moved": moved(), "unchanged": single(_unchanged),
         "matmul": _matmul_family, "loss": _loss, "fold": fold, "loop": loop_rule}


def _rule_for(op):
    """The batching rule ``op`` declared (``defop(..., batch=...)``)."""
    kind = op.batch
    if kind is None:
        raise RuntimeError(f"vmap: the op {op.name} declares no batching rule; declare one "
                           "with defop(..., batch=...), \"loop\" for the per-sample loop")
    return KINDS[kind] if isinstance(kind, str) else kind


_RULES = {}
state.call = call


def _interpose(op, args, proceed):
    """The vmap interposer (``_dispatch.py``): an op with a batched argument runs by its rule."""
    result = call(op, args)
    return proceed(args) if result is NotImplemented else result


_dispatch.register(_dispatch.Interposer("vmap", 20, lambda: state._depth > 0, _interpose))
for _hook in (levels_of, wrap, physical, as_seed, from_seed, random_batch):
    setattr(_dispatch.batched, _hook.__name__, _hook)  # what autograd and creation ask of vmap
