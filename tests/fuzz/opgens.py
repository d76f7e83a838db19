"""The op-table entries that need more than a template: shapes that fit (view, expand,
unflatten), dims and indices in range (narrow, gather/scatter, index_*), operands that fit
(matmul, cat), writes (``x[i] = y``) and the rest. Each is ``fn(g) -> source or None`` as
described in ``optable``.
"""
from __future__ import annotations

import numpy as np
import torch

from .generator import Operand, torch_literal

FLOAT = lambda v: v.is_floating_point()  # noqa: E731
INTLIKE = lambda v: v.dtype in (torch.int64, torch.int32, torch.bool)  # noqa: E731


def ndim(lo, hi=99):
    return lambda v: lo <= v.dim() <= hi


def _shape_src(shape, star=False):
    return ", ".join(map(str, shape)) if star and shape else repr(tuple(shape))


def view(g):
    x = g.pick()
    shape = g.factor_shape(x.val.numel()) if x.val.numel() != 1 or g.coin(0.7) else ()
    t = g.choice(["{x}.view({s})", "{x}.reshape({s})", "torch.reshape({x}, {s})",
                  "{x}.view({star})", "{x}.view(-1)", "{x}.reshape(-1)"])
    return t.format(x=x.expr, s=_shape_src(shape), star=_shape_src(shape, True) or "()")


def view_as(g):
    x = g.pick()
    y = g.pick(lambda v: v.numel() == x.val.numel())
    return f"{x.expr}.{g.choice(['view_as', 'reshape_as'])}({y.expr})"


def transpose(g):
    x = g.pick()
    d0, d1 = g.dim(x), g.dim(x)
    return g.choice([f"{x.expr}.transpose({d0}, {d1})", f"torch.transpose({x.expr}, {d0}, {d1})",
                     f"{x.expr}.swapaxes({d0}, {d1})"])


def transpose_short(g):
    x = g.pick(prefer=ndim(2, 2), p_prefer=0.7)
    if x.val.dim() >= 2 and g.coin(0.6):
        return f"{x.expr}.mT"
    return g.choice([f"{x.expr}.t()", f"{x.expr}.T", f"torch.t({x.expr})"])


def permute(g):
    x = g.pick()
    nd = x.val.dim()
    perm = [d - nd if g.coin(0.2) else d for d in g.r.sample(range(nd), nd)]
    return g.choice([f"{x.expr}.permute({tuple(perm)!r})", f"torch.permute({x.expr}, {perm!r})",
                     f"{x.expr}.permute({', '.join(map(str, perm))})" if perm else
                     f"{x.expr}.permute(())"])


def movedim(g):
    x = g.pick()
    return f"torch.movedim({x.expr}, {g.dim(x)}, {g.dim(x)})"


def unsqueeze(g):
    x = g.pick(ndim(0, 5))
    d = g.dim(x, extra=1)
    return g.choice([f"{x.expr}.unsqueeze({d})", f"torch.unsqueeze({x.expr}, {d})",
                     f"{x.expr}[None]", f"{x.expr}[..., None]"])


def squeeze(g):
    x = g.pick(prefer=lambda v: 1 in v.shape, p_prefer=0.8)
    ones = [d for d, s in enumerate(x.val.shape) if s == 1]
    d = g.choice(ones) if ones and g.coin(0.8) else g.dim(x)
    return g.choice([f"{x.expr}.squeeze()", f"{x.expr}.squeeze({d})",
                     f"torch.squeeze({x.expr}, {d})", f"{x.expr}.squeeze({g.dims(x)})"])


def expand(g):
    x = g.pick(ndim(0, 4))
    new = [g.randint(0, 3) if s == 1 and g.coin(0.7) else (-1 if g.coin(0.3) else s)
           for s in x.val.shape]
    shape = tuple([g.randint(1, 3) for _ in range(g.weighted([0, 1, 2], [3, 2, 1]))] + new)
    big = g.pick(lambda v: _broadcasts_into(x.val.shape, v.shape))
    return g.choice([f"{x.expr}.expand({_shape_src(shape)})",
                     f"{x.expr}.expand({_shape_src(shape, True)})" if shape else
                     f"{x.expr}.expand(())",
                     f"torch.broadcast_to({x.expr}, {_shape_src(shape)})",
                     f"{x.expr}.expand_as({big.expr})"])


def _broadcasts_into(small, big):
    try:
        return torch.broadcast_shapes(tuple(small), tuple(big)) == tuple(big)
    except RuntimeError:
        return False


def basic_index(g):
    x = g.pick()
    return f"{x.expr}[{g.basic_index(x)}]"


def narrow_select(g):
    x = g.pick(lambda v: v.dim() >= 1)
    if x is None:
        return None
    d = g.dim(x)
    size = x.val.shape[d] if -x.val.dim() <= d < x.val.dim() else 1
    start = g.randint(-size, size) if size else 0
    length = g.randint(0, max(size - (start % size if size else 0), 0))
    i = g.randint(-size, size - 1) if size else 0
    return g.choice([f"{x.expr}.narrow({d}, {start}, {length})",
                     f"torch.narrow({x.expr}, {d}, {start}, {length})",
                     f"{x.expr}.select({d}, {i})", f"torch.select({x.expr}, {d}, {i})"])


def split(g):
    x = g.pick(lambda v: v.dim() >= 1)
    if x is None:
        return None
    d = g.dim(x)
    size = x.val.shape[d] if -x.val.dim() <= d < x.val.dim() else 1
    k = g.randint(1, max(size, 1))
    cuts, rest = [], size
    while rest > 0:
        c = g.randint(1, rest)
        cuts.append(c)
        rest -= c
    return g.choice([f"torch.split({x.expr}, {k}, dim={d})", f"{x.expr}.split({k}, {d})",
                     f"{x.expr}.split({cuts!r}, {d})", f"{x.expr}.chunk({k}, {d})",
                     f"torch.chunk({x.expr}, {k}, dim={d})", f"{x.expr}.unbind({d})",
                     f"torch.tensor_split({x.expr}, {k}, dim={d})"])


def flatten(g):
    x = g.pick()
    nd = max(x.val.dim(), 1)
    s = g.randint(-nd, nd - 1)
    e = g.randint(s % nd, nd - 1)
    return g.choice([f"{x.expr}.flatten()", f"{x.expr}.flatten({s}, {e})",
                     f"torch.flatten({x.expr}, {s})", f"{x.expr}.ravel()"])


def unflatten(g):
    x = g.pick(lambda v: v.dim() >= 1)
    if x is None:
        return None
    d = g.dim(x)
    size = x.val.shape[d] if -x.val.dim() <= d < x.val.dim() else 1
    return f"{x.expr}.unflatten({d}, {g.factor_shape(size)!r})"


def copies(g):
    x = g.pick()
    forms = [f"{x.expr}.contiguous()", f"{x.expr}.clone()", f"torch.clone({x.expr})",
             f"{x.expr}.detach()", f"{x.expr}.clone().detach()"]
    if x.val.is_floating_point():
        forms.append(f"{x.expr}.detach().requires_grad_()")
    return g.choice(forms)


def misc_shape(g):
    x = g.pick()
    nd = x.val.dim()
    d = g.dim(x)
    reps = tuple(g.randint(1, 2) for _ in range(nd + g.randint(0, 1))) or (2,)
    forms = [f"{x.expr}.flip({g.dims(x)})", f"torch.roll({x.expr}, {g.randint(-3, 3)}, {d})",
             f"{x.expr}.repeat{reps!r}" if len(reps) > 1 else f"{x.expr}.repeat({reps[0]})",
             f"{x.expr}.tile({reps!r})"]
    if nd >= 2:
        forms += [f"{x.expr}.diagonal()", f"torch.diagonal({x.expr}, {g.randint(-2, 2)}, "
                  f"{g.dim(x)}, {g.dim(x)})", f"{x.expr}.tril({g.randint(-1, 1)})",
                  f"torch.triu({x.expr})"]
    if nd >= 1:
        size = x.val.shape[d] if -nd <= d < nd else 1
        forms.append(f"{x.expr}.unfold({d}, {g.randint(1, max(size, 1))}, {g.randint(1, 2)})")
    return g.choice(forms)


def _size(x, d):
    return x.val.shape[d] if -x.val.dim() <= d < x.val.dim() else 1


def adv_index(g):
    x = g.pick(lambda v: v.dim() >= 1)
    if x is None:
        return None
    sh = x.val.shape
    forms = [f"{x.expr}[{g.index(sh[0])}]", f"{x.expr}[{g.index(sh[0], shape=(2, 2))}]",
             f"{x.expr}[[{g.randint(-sh[0], max(sh[0] - 1, 0))}, 0]]",
             f"{x.expr}[{g.mask(x)}]", f"{x.expr}[{g.mask(x, shape=tuple(sh[:1]))}]"]
    if x.val.dim() >= 2:
        i0 = g.index(sh[0], shape=(3,))
        forms += [f"{x.expr}[:, {g.index(sh[1])}]", f"{x.expr}[{i0}, {g.index(sh[1], shape=(3,))}]",
                  f"{x.expr}[{g.index(sh[0])}, 1:]", f"{x.expr}[..., {g.index(sh[-1])}]"]
    return g.choice(forms)


def index_select(g):
    x = g.pick(lambda v: v.dim() >= 1)
    if x is None:
        return None
    d = g.dim(x)
    idx = g.index(_size(x, d), nonneg=True)
    return g.choice([f"torch.index_select({x.expr}, {d}, {idx})",
                     f"{x.expr}.index_select({d}, {idx})",
                     f"torch.take({x.expr}, {g.index(x.val.numel())})"])


def _scatter_index(g, x, d, distinct):
    """An index for gather/scatter along ``d`` of ``x``: no larger than ``x`` in the other
    dims; with ``distinct``, no two entries of a slice along ``d`` are equal."""
    shape = [g.randint(0, s) if g.coin(0.3) else s for s in x.val.shape]
    nd = x.val.dim()
    if nd == 0:
        return torch_literal([0], (), "int64"), ()
    size = x.val.shape[d]
    shape[d] = g.randint(1, size) if size and distinct else g.randint(0 if not size else 1, 3)
    arr = np.zeros(shape, dtype=np.int64)
    moved = np.moveaxis(arr, d, -1)
    for pos in np.ndindex(moved.shape[:-1]):
        n = moved.shape[-1]
        vals = g.r.sample(range(size), n) if distinct and n <= size else \
            [g.randint(0, max(size - 1, 0)) for _ in range(n)]
        moved[pos] = vals
    return torch_literal(arr.ravel().tolist(), tuple(shape), "int64"), tuple(shape)


def gather_scatter(g):
    x = g.pick(lambda v: v.dim() >= 1, prefer=FLOAT, p_prefer=0.8)
    if x is None:
        return None
    d = g.randint(0, x.val.dim() - 1)
    kind = g.choice(["gather", "scatter", "scatter_value", "scatter_add", "scatter_reduce"])
    idx, shape = _scatter_index(g, x, d, distinct=kind not in ("gather", "scatter_add"))
    dt = str(x.val.dtype)[6:]
    src = g.const(shape, dt)
    if kind == "gather":
        return g.choice([f"torch.gather({x.expr}, {d}, {idx})", f"{x.expr}.gather({d}, {idx})"])
    if kind == "scatter":
        return f"{x.expr}.scatter({d}, {idx}, {src})"
    if kind == "scatter_value":
        return f"torch.scatter({x.expr}, {d}, {idx}, {g.scalar()})"
    if kind == "scatter_add":
        return f"{x.expr}.scatter_add({d}, {idx}, {src})"
    red = g.choice(["sum", "prod", "mean", "amax", "amin"])
    return f"{x.expr}.scatter_reduce({d}, {idx}, {src}, {red!r}, include_self={g.coin()})"


def index_ops(g):
    x = g.pick(lambda v: v.dim() >= 1, prefer=FLOAT, p_prefer=0.8)
    if x is None:
        return None
    d = g.randint(0, x.val.dim() - 1)
    idx = g.index(x.val.shape[d], distinct=True)
    n = len(eval(idx, {"torch": torch}))
    shape = list(x.val.shape)
    shape[d] = n
    src = g.const(tuple(shape), str(x.val.dtype)[6:])
    return g.choice([f"{x.expr}.index_add({d}, {idx}, {src})",
                     f"{x.expr}.index_add({d}, {idx}, {src}, alpha={g.scalar('int')})",
                     f"{x.expr}.index_copy({d}, {idx}, {src})",
                     f"{x.expr}.index_fill({d}, {idx}, {g.scalar()})"])


def masked(g):
    x = g.pick(prefer=FLOAT, p_prefer=0.7)
    m = g.mask(x)
    v = g.scalar() if g.coin(0.8) else g.const((), g.dtype())
    return g.choice([f"{x.expr}.masked_fill({m}, {v})", f"torch.masked_fill({x.expr}, {m}, {v})",
                     f"torch.masked_select({x.expr}, {m})", f"{x.expr}.masked_select({m})"])


def where(g):
    x = g.pick(prefer=FLOAT, p_prefer=0.7)
    m = g.mask(x)
    y = g.partner(x)
    return g.choice([f"torch.where({m}, {x.expr}, {y})", f"{x.expr}.where({m}, {y})",
                     f"torch.where({m}, {y}, {x.expr})",
                     f"torch.where({m}, {x.expr}, {g.scalar()})",
                     f"torch.where({x.expr} > 0, {x.expr}, {y})"])


def matmul(g):
    x = g.pick(lambda v: v.dim() >= 1, prefer=FLOAT, p_prefer=0.85)
    if x is None:
        return None
    n = x.val.shape[-1]
    nd = x.val.dim()

    def fits(v):
        k = v.shape[-2] if v.dim() >= 2 else (v.shape[0] if v.dim() == 1 else -1)
        return k == n and v.dim() >= 1
    live = g.pick(fits)
    dt = str(x.val.dtype)[6:] if g.coin(0.9) else g.dtype()
    y = live.expr if live is not None and g.coin(0.4) else \
        g.const((n,) if g.coin(0.3) else (n, g.randint(1, 4)), dt)
    forms = [f"{x.expr} @ {y}", f"torch.matmul({x.expr}, {y})", f"{x.expr}.matmul({y})"]
    if nd >= 2:
        forms += [f"{x.expr} @ {x.expr}.mT", f"{x.expr}.mT @ {x.expr}"]
    if nd == 2:
        forms += [f"torch.mm({x.expr}, {g.const((n, g.randint(1, 3)), dt)})",
                  f"torch.mv({x.expr}, {g.const((n,), dt)})"]
    if nd == 1:
        forms += [f"torch.dot({x.expr}, {g.const((n,), dt)})", f"torch.outer({x.expr}, {x.expr})"]
    if nd == 3:
        forms.append(f"torch.bmm({x.expr}, {x.expr}.mT)")
    return g.choice(forms)


def cat_stack(g):
    x = g.pick()
    nd = x.val.dim()
    d = g.dim(x)
    shape = list(x.val.shape)
    stack = g.coin(0.35)
    if stack:
        d = g.dim(x, extra=1)
        same = g.pick(lambda v: tuple(v.shape) == tuple(shape))
        y = same.expr if g.coin(0.5) else g.const(tuple(shape), g.dtype((6, 2, 1, 1)))
        return g.choice([f"torch.stack([{x.expr}, {y}], {d})", f"torch.stack(({y}, {x.expr}))"])
    if -nd <= d < nd:
        other = g.pick(lambda v: v.dim() == nd and all(
            a == b for k, (a, b) in enumerate(zip(v.shape, shape)) if k != d % nd))
        shape[d] = g.randint(0, 3)
        y = other.expr if other is not None and g.coin(0.5) else \
            g.const(tuple(shape), str(x.val.dtype)[6:] if g.coin(0.8) else g.dtype())
    else:
        y = x.expr
    if g.coin(0.05):
        y = "torch.zeros(0)"  # the legacy empty 1-d tensor cat skips
    return g.choice([f"torch.cat([{x.expr}, {y}], {d})", f"torch.cat(({y}, {x.expr}), dim={d})",
                     f"torch.cat([{x.expr}, {x.expr}, {y}], dim={d})"])


def convert(g):
    x = g.pick()
    dt = g.choice(["float32", "float64", "int64", "bool", "int32"])
    y = g.pick()
    return g.choice([f"{x.expr}.to(torch.{dt})", f"{x.expr}.float()", f"{x.expr}.long()",
                     f"{x.expr}.double()", f"{x.expr}.bool()", f"{x.expr}.int()",
                     f"{x.expr}.type(torch.{dt})", f"{x.expr}.to(dtype=torch.{dt}, copy=True)",
                     f"{x.expr}.type_as({y.expr})", f"{x.expr}.to({y.expr}.dtype)"])


def like(g):
    x = g.pick()
    shape = _shape_src(g.shape())
    return g.choice([f"torch.zeros_like({x.expr})", f"torch.ones_like({x.expr})",
                     f"torch.full_like({x.expr}, {g.scalar()})",
                     f"torch.ones_like({x.expr}, dtype=torch.float64)",
                     f"torch.full({shape}, {g.scalar()})", f"{x.expr}.new_zeros({shape})",
                     f"torch.arange({g.randint(0, 5)})", f"torch.arange({g.scalar('float')}, 4)"])


def meta(g):
    x = g.pick()
    forms = [f"{x.expr}.size()", f"{x.expr}.numel()", f"{x.expr}.dim()", f"{x.expr}.tolist()",
             f"{x.expr}.is_contiguous()", f"{x.expr}.stride()",
             f"torch.equal({x.expr}, {g.partner(x)})", f"{x.expr}.is_floating_point()"]
    if x.val.numel() == 1:
        forms += [f"{x.expr}.item()", f"float({x.expr})", f"bool({x.expr})"]
    return g.choice(forms)


def setitem(g):
    """``x[index] = y`` and ``x[index] += y`` (basic, integer-tensor and mask indices)."""
    x = g.pick(prefer=g.has_views, p_prefer=0.5)
    sh = x.val.shape
    k = g.weighted(["basic", "adv", "mask"], [5, 2, 2])
    if k == "adv" and x.val.dim() >= 1:
        idx = g.index(sh[0], distinct=True)
    elif k == "mask":
        idx = g.mask(x)
    else:
        idx = g.basic_index(x)
    part = g.peek(f"{x.expr}[{idx}]")
    if part is None or g.coin(0.4):
        y = g.scalar()
    else:
        y = g.partner(Operand(f"{x.expr}[{idx}]", part), into=True, scalar_p=0)
    op = " += " if k == "basic" and "[" not in x.expr and g.coin(0.25) else " = "
    code = f"{x.expr}[{idx}]{op}{y}"
    return "with torch.no_grad(): " + code if g.coin(0.1) else code


def inplace_index(g):
    x = g.pick(lambda v: v.dim() >= 1, prefer=g.has_views, p_prefer=0.5)
    if x is None:
        return None
    d = g.randint(0, x.val.dim() - 1)
    idx, shape = _scatter_index(g, x, d, distinct=True)
    src = g.const(shape, str(x.val.dtype)[6:])
    return g.choice([f"{x.expr}.scatter_({d}, {idx}, {src})",
                     f"{x.expr}.masked_fill_({g.mask(x)}, {g.scalar()})",
                     f"{x.expr}.scatter_add_({d}, {idx}, {src})",
                     f"{x.expr}.index_fill_({d}, {g.index(x.val.shape[d], distinct=True)}, "
                     f"{g.scalar()})"])


def inplace_shape(g):
    x = g.pick(prefer=g.has_views, p_prefer=0.3)
    return g.choice([f"{x.expr}.unsqueeze_({g.dim(x, extra=1)})", f"{x.expr}.squeeze_()",
                     f"{x.expr}.t_()", f"{x.expr}.transpose_({g.dim(x)}, {g.dim(x)})",
                     f"{x.expr}.requires_grad_()", f"{x.expr}.requires_grad_(False)",
                     f"{x.expr}.detach_()"])


def sorting(g):
    x = g.pick(prefer=FLOAT, p_prefer=0.7)
    d = g.dim(x)
    return g.choice([f"torch.sort({x.expr}, dim={d}, stable=True)",
                     f"{x.expr}.sort(dim={d}, descending=True, stable=True)",
                     f"torch.argsort({x.expr}, dim={d}, stable=True)",
                     f"torch.cummax({x.expr}, {d})", f"{x.expr}.cummin({d})",
                     f"torch.unique({x.expr})", f"torch.unique({x.expr}, return_counts=True)",
                     f"torch.aminmax({x.expr})", f"torch.std_mean({x.expr}, {d})",
                     f"torch.nonzero({x.expr})", f"{x.expr}.nonzero(as_tuple=True)",
                     f"torch.where({g.mask(x)})"])


def linalg(g):
    """The matmul family beyond ``@``: addmm, addmv, addr, baddbmm, vdot, trace, ..."""
    x = g.pick(ndim(1, 3), prefer=FLOAT, p_prefer=0.9)
    if x is None:
        return None
    sh, dt = x.val.shape, str(x.val.dtype)[6:]
    n = sh[-1]
    if x.val.dim() == 1:
        return g.choice([f"torch.addr({g.const(g.broadcastable((n, n), True), dt)}, {x.expr}, "
                         f"{x.expr})", f"torch.vdot({x.expr}, {g.const((n,), dt)})",
                         f"torch.diag_embed({x.expr})", f"torch.diag({x.expr})",
                         f"torch.dist({x.expr}, {g.partner(x, scalar_p=0)})"])
    if x.val.dim() == 2:
        m, k = sh[0], g.randint(1, 3)
        return g.choice([f"torch.addmm({g.const(g.broadcastable((m, k), True), dt)}, {x.expr}, "
                         f"{g.const((n, k), dt)}, beta=0.5)",
                         f"torch.addmv({g.const((m,), dt)}, {x.expr}, {g.const((n,), dt)}, "
                         f"alpha=2)", f"torch.trace({x.expr})",
                         f"torch.rot90({x.expr}, {g.randint(-1, 2)}, (0, 1))",
                         f"torch.block_diag({x.expr}, {g.const((2, 1), dt)})",
                         f"torch.diag({x.expr}, {g.randint(-1, 1)})"])
    return g.choice([f"torch.baddbmm({g.const((sh[0], sh[1], sh[1]), dt)}, {x.expr}, "
                     f"{x.expr}.mT)", f"torch.bmm({x.expr}.mT, {x.expr})"])


def nn_functional(g):
    """Losses, normalisation and padding from ``torch.nn.functional``."""
    x = g.pick(ndim(1), prefer=FLOAT, p_prefer=0.9)
    if x is None:
        return None
    sh, dt, d = x.val.shape, str(x.val.dtype)[6:], g.dim(x)
    last = sh[-1]
    F = "torch.nn.functional"
    red = g.choice(["'mean'", "'sum'", "'none'"])
    loss = g.choice(["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
                     "binary_cross_entropy_with_logits", "soft_margin_loss"])
    forms = [f"{F}.{loss}({x.expr}, {g.const(tuple(sh), dt)}, reduction={red})",
             f"{F}.layer_norm({x.expr}, ({last},))",
             f"{F}.layer_norm({x.expr}, ({last},), {g.const((last,), dt)}, "
             f"{g.const((last,), dt)})",
             f"{F}.normalize({x.expr}, dim={d})", f"{F}.pad({x.expr}, (1, 2))",
             f"{F}.pad({x.expr}, (0, 1, 1, 0), value=0.5)", f"{F}.softmin({x.expr}, {d})",
             f"{F}.pad({x.expr}, (1, 1), mode={g.choice(['reflect', 'replicate'])!r})"]
    if last % 2 == 0:
        forms.append(f"{F}.glu({x.expr}, -1)")
    return g.choice(forms)


def grad_hooks(g):
    """``retain_grad()`` and gradient hooks on tensors that require grad."""
    x = g.pick(lambda v: v.requires_grad)
    if x is None:
        return None
    return g.choice([f"{x.expr}.retain_grad()", f"{x.expr}.register_hook(lambda g: g * 2)",
                     f"{x.expr}.register_hook(lambda g: None)",
                     f"{x.expr}.register_hook(lambda g: g.clamp(-1, 1))"])
