"""The op table the fuzzer draws from: one ``Op(name, weight, fn)`` per entry.

``fn(g)`` gets the program being written (``generator.Gen``: live PyTorch values and argument
helpers) and returns one line of source: an expression (assigned to a fresh ``tN``), or with
``stmt=True`` a whole statement (in-place ops, ``x[i] = y``), or None when it does not apply.
``{x}`` in a template is the operand picked, ``{y}`` a second operand broadcasting with it
(a live tensor, a constant tensor or a Python scalar), ``{s}`` a Python scalar.

To cover a new op, add an entry (most are one line using ``unary``/``binary``/``reduction``/
``inplace``; those needing fitted shapes, dims or indices are functions in ``opgens``).
``name`` is what reports count mismatches by; ``weight`` how often it is drawn. The report's
coverage section lists ember's registered ops that no program reached yet.
"""
from __future__ import annotations

from dataclasses import dataclass

from .opgens import (
    FLOAT,
    INTLIKE,
    adv_index,
    basic_index,
    cat_stack,
    convert,
    copies,
    expand,
    flatten,
    gather_scatter,
    grad_hooks,
    index_ops,
    index_select,
    inplace_index,
    inplace_shape,
    like,
    linalg,
    masked,
    matmul,
    meta,
    misc_shape,
    movedim,
    narrow_select,
    nn_functional,
    permute,
    setitem,
    sorting,
    split,
    squeeze,
    transpose,
    transpose_short,
    unflatten,
    unsqueeze,
    view,
    view_as,
    where,
)


@dataclass
class Op:
    name: str
    weight: float
    fn: object
    stmt: bool = False


def _fmt(g, template, x, y=None, **kw):
    """Fill a template: ``{x}``, ``{y}`` (a partner, made only when used), ``{s}``/``{s2}``
    Python scalars, and whatever else ``kw`` gives."""
    if y is None and "{y}" in template:
        y = g.partner(x)
    return template.format(x=x.expr, y=y, s=g.scalar(), s2=g.scalar(), **kw)


def unary(*templates, prefer=FLOAT, p=0.75, pred=None):
    """``template.format(x=...)`` on a random live tensor (float ones preferred)."""
    def fn(g):
        x = g.pick(pred, prefer=prefer, p_prefer=p)
        return x and _fmt(g, g.choice(templates), x)
    return fn


def binary(*templates, prefer=None, p=0.75, scalar_p=0.35, dtypes=None):
    """``{x} op {y}`` forms; ``{s}`` in a template is a Python scalar (reflected forms).
    ``dtypes``: the partner's dtype is drawn from these (mostly)."""
    def fn(g):
        x = g.pick(prefer=prefer, p_prefer=p)
        dt = g.choice(dtypes) if dtypes and g.coin(0.9) else None
        s = g.scalar({"int64": "int", "bool": "bool"}.get(dt, dt and "float"))
        return x and g.choice(templates).format(
            x=x.expr, y=g.partner(x, scalar_p=scalar_p, dtype=dt), s=s,
            a=g.choice([2, -1, 0.5]))
    return fn


def names(*ns, prefix="torch.", method=True, weight=1.0, **kw):
    """One unary entry per name: ``torch.name(x)`` and ``x.name()``."""
    return [Op(n, weight, unary(f"{prefix}{n}({{x}})", *([f"{{x}}.{n}()"] if method else []),
                                **kw)) for n in ns]


def reduction(name, kinds=("all", "dim", "keepdim"), prefer=FLOAT, p=0.8, extra=""):
    """``x.name()``, ``torch.name(x, d)``, ``x.name(d, keepdim=True)``, ``x.name(dim=(d, e))``."""
    def fn(g):
        x = g.pick(prefer=prefer, p_prefer=p)
        if x is None:
            return None
        kind = g.choice(kinds)
        d, kd, ex = g.dim(x), g.coin(), (extra if g.coin(0.3) else "")
        return {
            "all": g.choice([f"{x.expr}.{name}({ex.lstrip(', ')})", f"torch.{name}({x.expr}{ex})"]),
            "dim": g.choice([f"torch.{name}({x.expr}, {d}{ex})", f"{x.expr}.{name}(dim={d}{ex})"]),
            "keepdim": f"{x.expr}.{name}({d}, keepdim={kd}{ex})",
            "dims": f"torch.{name}({x.expr}, dim={g.dims(x)}, keepdim={kd}{ex})",
        }[kind]
    return fn


def inplace(*templates, pred=None, into=True):
    """An in-place statement on a random live tensor (views and their bases preferred), now
    and then under ``torch.no_grad()``."""
    def fn(g):
        x = g.pick(pred, prefer=g.has_views, p_prefer=0.5)
        if x is None:
            return None
        t = g.choice([t for t in templates if "[" not in x.expr or " += " not in t] or
                     templates[:1])
        code = _fmt(g, t, x, y=g.partner(x, into=into), lo=g.scalar(), hi=g.scalar())
        return "with torch.no_grad(): " + code if g.coin(0.12) else code
    return fn


FUNCTIONAL = ["softplus", "gelu", "silu", "elu", "leaky_relu", "hardtanh", "relu6",
              "logsigmoid", "mish", "hardsigmoid", "hardswish", "softsign", "tanhshrink", "selu",
              "celu", "hardshrink", "softshrink"]

TABLE = [
    # arithmetic operators, their reflected forms and function spellings
    Op("add", 4, binary("{x} + {y}", "{s} + {x}", "torch.add({x}, {y})", "{x}.add({y})",
                        "torch.add({x}, {y}, alpha={a})")),
    Op("sub", 3, binary("{x} - {y}", "{s} - {x}", "torch.sub({x}, {y})",
                        "{x}.sub({y}, alpha={a})", "torch.rsub({x}, {y})")),
    Op("mul", 4, binary("{x} * {y}", "{s} * {x}", "torch.mul({x}, {y})", "{x}.mul({y})")),
    Op("div", 3, binary("{x} / {y}", "{s} / {x}", "torch.div({x}, {y})", "{x}.true_divide({y})",
                        "torch.div({x}, {y}, rounding_mode='floor')",
                        "torch.div({x}, {y}, rounding_mode='trunc')")),
    Op("floor_divide", 2, binary("{x} // {y}", "{s} // {x}", "torch.floor_divide({x}, {y})")),
    Op("remainder", 2, binary("{x} % {y}", "{s} % {x}", "torch.remainder({x}, {y})",
                              "torch.fmod({x}, {y})")),
    Op("pow", 3, binary("{x} ** {y}", "{s} ** {x}", "torch.pow({x}, {y})", "{x}.pow({y})",
                        "{x} ** 2", "{x} ** 0.5", "torch.pow({s}, {x})", "{x} ** -1")),
    Op("neg", 1, unary("-{x}", "torch.neg({x})", "{x}.neg()", "+{x}")),
    Op("abs", 1, unary("abs({x})", "torch.abs({x})", "{x}.abs()")),
    # comparisons, bitwise and logical ops
    Op("compare", 3, binary("{x} == {y}", "{x} != {y}", "{x} < {y}", "{x} <= {y}", "{x} > {y}",
                            "{x} >= {y}", "{s} < {x}", "torch.eq({x}, {y})", "{x}.ne({y})",
                            "torch.ge({x}, {y})", "torch.isclose({x}, {y})")),
    Op("bitwise", 2, binary("{x} & {y}", "{x} | {y}", "{x} ^ {y}", "{s} & {x}",
                            "torch.bitwise_and({x}, {y})", "torch.bitwise_xor({x}, {y})",
                            "{x} << 1", "{x} >> 1", prefer=INTLIKE, p=0.85,
                            dtypes=("int64", "bool"))),
    Op("bitwise_not", 1, unary("~{x}", "torch.bitwise_not({x})", prefer=INTLIKE, p=0.8)),
    Op("logical", 2, binary("torch.logical_and({x}, {y})", "torch.logical_or({x}, {y})",
                            "torch.logical_xor({x}, {y})", "torch.logical_not({x})",
                            scalar_p=0.03)),
    # pointwise math
    *names("exp", "log", "sin", "tanh", "sigmoid", "relu", "sqrt", weight=1.5),
    *names("log2", "log10", "log1p", "expm1", "cos", "tan", "rsqrt", "reciprocal", "square",
           "sign", "floor", "ceil", "round", "trunc", "frac", "erf", "erfc", "atan", "asin",
           "acos", "sinh", "cosh", "asinh", "exp2", "logit", "sgn", "deg2rad", "sinc",
           "nan_to_num", "isnan", "isfinite", "isinf", "signbit", "logical_not", weight=0.4),
    *names(*FUNCTIONAL, prefix="torch.nn.functional.", method=False, weight=0.3),
    Op("softplus(beta)", 0.3, unary("torch.nn.functional.softplus({x}, beta=2.0)",
                                    "torch.nn.functional.leaky_relu({x}, 0.2)",
                                    "torch.nn.functional.elu({x}, alpha=0.5)")),
    Op("clamp", 2, unary("{x}.clamp({s}, {s2})", "torch.clamp({x}, min={s})",
                         "{x}.clamp(max={s})", "torch.clip({x}, {s}, {s2})",
                         "{x}.clamp_min({s})", "{x}.clamp_max({s})")),
    Op("clamp(tensor)", 1, binary("torch.clamp({x}, {y})", "{x}.clamp(max={y})",
                                  "torch.clamp({x}, min={y}, max={y})")),
    Op("maximum", 2, binary("torch.maximum({x}, {y})", "torch.minimum({x}, {y})",
                            "torch.fmax({x}, {y})", "torch.fmin({x}, {y})", "torch.max({x}, {y})",
                            scalar_p=0.03)),
    Op("binary_math", 1.5, binary("torch.atan2({x}, {y})", "torch.hypot({x}, {y})",
                                  "torch.logaddexp({x}, {y})", "torch.xlogy({x}, {y})",
                                  "torch.copysign({x}, {y})", "torch.heaviside({x}, {y})",
                                  prefer=FLOAT, p=0.85, scalar_p=0.15)),
    Op("lerp", 1, binary("torch.lerp({x}, {y}, 0.25)", "{x}.lerp({y}, {y})",
                         "torch.addcmul({x}, {y}, {y}, value={a})",
                         "torch.addcdiv({x}, {y}, {y})", prefer=FLOAT, p=0.9, scalar_p=0)),
    Op("where", 2.5, where),
    # reductions
    Op("sum", 3, reduction("sum", ("all", "dim", "keepdim", "dims"), prefer=None,
                           extra=", dtype=torch.float64")),
    Op("mean", 2, reduction("mean", ("all", "dim", "keepdim", "dims"))),
    Op("prod", 1, reduction("prod")),
    Op("max", 2, reduction("max")),
    Op("min", 1, reduction("min")),
    Op("amax", 1, reduction("amax", ("all", "dim", "dims"))),
    Op("amin", 0.5, reduction("amin", ("dim", "dims"))),
    Op("argmax", 1, reduction("argmax", prefer=None)),
    Op("argmin", 0.5, reduction("argmin", prefer=None)),
    Op("var", 1.5, reduction("var", ("all", "dim", "keepdim", "dims"), extra=", correction=0")),
    Op("std", 1, reduction("std", ("all", "dim", "keepdim"), extra=", unbiased=False")),
    Op("var_mean", 0.3, reduction("var_mean", ("dim", "dims"))),
    Op("logsumexp", 1.5, reduction("logsumexp", ("dim", "keepdim", "dims"))),
    Op("all/any", 1, reduction("any", prefer=None)),
    Op("all", 0.5, reduction("all", prefer=None)),
    Op("count_nonzero", 0.3, reduction("count_nonzero", ("all", "dim"), prefer=None)),
    Op("nansum", 0.3, reduction("nansum", ("all", "dim"))),
    Op("norm", 0.5, unary("{x}.norm()", "torch.linalg.vector_norm({x})",
                          "torch.linalg.vector_norm({x}, ord=1)", "torch.median({x})",
                          "torch.round({x}, decimals=1)",
                          "torch.nan_to_num({x}, nan=0.5, posinf=2.0)")),
    Op("softmax", 2, reduction("softmax", ("dim",), extra=", dtype=torch.float64")),
    Op("log_softmax", 1.5, reduction("log_softmax", ("dim",))),
    Op("cumsum", 1.5, reduction("cumsum", ("dim",), prefer=None)),
    Op("cumprod", 0.7, reduction("cumprod", ("dim",))),
    Op("logcumsumexp", 0.3, reduction("logcumsumexp", ("dim",))),
    # shape ops and views
    Op("view", 4, view),
    Op("view_as", 0.5, view_as),
    Op("transpose", 2, transpose),
    Op("t/T/mT", 2, transpose_short),
    Op("permute", 2, permute),
    Op("movedim", 0.5, movedim),
    Op("unsqueeze", 2, unsqueeze),
    Op("squeeze", 2, squeeze),
    Op("expand", 2.5, expand),
    Op("getitem", 4, basic_index),
    Op("narrow/select", 2, narrow_select),
    Op("split/chunk", 2, split),
    Op("flatten", 1, flatten),
    Op("unflatten", 0.5, unflatten),
    Op("clone/detach", 2.5, copies),
    Op("flip/roll/repeat", 1.5, misc_shape),
    # advanced indexing and friends
    Op("adv_index", 3, adv_index),
    Op("index_select", 1, index_select),
    Op("gather/scatter", 2, gather_scatter),
    Op("index_add/copy/fill", 1, index_ops),
    Op("masked", 2, masked),
    Op("matmul", 3, matmul),
    Op("linalg", 1.5, linalg),
    Op("sort/unique/nonzero", 1.5, sorting),
    Op("nn.functional", 1.5, nn_functional),
    Op("cat/stack", 2.5, cat_stack),
    # dtype conversions, constructors, Python-level queries
    Op("to(dtype)", 2, convert),
    Op("like", 0.5, like),
    Op("meta", 0.7, meta),
    # in-place ops, writes through views and index writes
    Op("add_", 3, inplace("{x}.add_({y})", "{x} += {y}", "{x}.add_({y}, alpha={lo})"), True),
    Op("sub_", 1, inplace("{x}.sub_({y})", "{x} -= {y}"), True),
    Op("mul_", 3, inplace("{x}.mul_({y})", "{x} *= {y}", "{x}.mul_({s})"), True),
    Op("div_", 1, inplace("{x}.div_({y})", "{x} /= {y}", "{x}.div_({s})"), True),
    Op("clamp_", 1.5, inplace("{x}.clamp_({lo}, {hi})", "{x}.clamp_(min={lo})",
                              "{x}.clamp_max_({hi})"), True),
    Op("zero_/fill_", 2, inplace("{x}.zero_()", "{x}.fill_({s})", "{x}.fill_({y})",
                                 into=False), True),
    Op("copy_", 2, inplace("{x}.copy_({y})"), True),
    Op("unary_", 3, inplace("{x}.relu_()", "{x}.sigmoid_()", "{x}.tanh_()", "{x}.exp_()",
                            "{x}.abs_()", "{x}.neg_()", "{x}.sqrt_()", "{x}.pow_(2)",
                            "{x}.floor_()", "torch.nn.functional.relu({x}, inplace=True)",
                            "{x}.sin_()", "{x}.log_()"), True),
    Op("pointwise_", 1, inplace("{x}.lerp_({y}, 0.5)", "{x}.addcmul_({y}, {y})",
                                "{x}.clamp_min_({s})", "{x}.masked_fill_({x} > 0, {s})"), True),
    Op("setitem", 4, setitem, True),
    Op("index_", 1.5, inplace_index, True),
    Op("shape_", 0.7, inplace_shape, True),
    Op("hooks", 0.7, grad_hooks, True),
]

