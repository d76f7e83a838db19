"""``out=`` on every function PyTorch gives it, compared with PyTorch.

The list of functions is not kept by hand: ``_torch_out_names`` reads it off PyTorch (the
signatures of ``torch._C._VariableFunctions`` in its ``.pyi`` stub, the Python signatures of
the functions PyTorch writes in Python, the documented signatures of ``torch.linalg``), and
``test_every_out_function_has_a_recipe`` fails when ember exports one that ``RECIPES`` lacks,
so a function cannot drop out of the sweep silently.
"""
import ast
import inspect
import os
import warnings

import numpy as np
import pytest

import ember

from .oracle import Raised, outcome

torch = pytest.importorskip("torch")

F = [[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]]
G = [[2.0, 0.5, -1.0], [3.0, -2.0, 0.25]]
P = [[0.25, 0.5, 0.75], [0.1, 0.9, 0.3]]  # in (0, 1): every unary function's domain
I = [[1, 2, 3], [4, 5, 6]]  # noqa: E741
SPD = [[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]]
V = [1.0, -2.0, 0.5]


def _unary(name):
    return lambda lib, t, out: getattr(lib, name)(t(P), out=out)


def _binary(name, a=F, b=G):
    return lambda lib, t, out: getattr(lib, name)(t(a), t(b), out=out)


def _dim(name, *args, data=F, **kwargs):
    return lambda lib, t, out: getattr(lib, name)(t(data), *args, out=out, **kwargs)


def _seq(name, first=F, second=G):
    return lambda lib, t, out: getattr(lib, name)([t(first), t(second)], out=out)


def _linalg(name, *data, **kwargs):
    return lambda lib, t, out: getattr(lib.linalg, name)(*(t(d) for d in data), out=out,
                                                         **kwargs)


UNARY = """abs absolute acos acosh arccos arccosh arcsin arcsinh arctan arctanh asin asinh atan
    atanh ceil cos cosh deg2rad erf erfc erfinv exp exp2 expm1 fix floor frac log log10 log1p
    log2 logit nan_to_num neg negative rad2deg reciprocal round rsqrt sgn sigmoid sign signbit
    sin sinc sinh sqrt square tan tanh trunc angle isneginf isposinf logical_not digamma
    conj_physical
    lgamma""".split()
BINARY = """add arctan2 atan2 copysign div divide eq float_power floor_divide fmax fmin fmod ge
    greater greater_equal gt heaviside hypot le less less_equal logaddexp logaddexp2 logical_and
    logical_or logical_xor lt maximum minimum mul multiply ne not_equal pow remainder sub
    subtract true_divide xlogy""".split()
BITWISE = "bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift".split()
ALONG_DIM = """sum mean nansum nanmean prod amax amin all any logsumexp std var argmax argmin
    median max min mode cumsum cumprod cummax cummin logcumsumexp sort softmax
    log_softmax""".split()
STACKS = "cat concat concatenate stack hstack vstack dstack column_stack row_stack".split()

RECIPES = {name: _unary(name) for name in UNARY}
RECIPES.update({name: _binary(name) for name in BINARY})
RECIPES.update({name: _binary(name, I, [[1, 0, 2], [3, 1, 0]]) for name in BITWISE})
RECIPES.update({name: _dim(name, 1) for name in ALONG_DIM})
RECIPES.update({name: _seq(name) for name in STACKS})
RECIPES.update({
    "bitwise_not": lambda lib, t, out: lib.bitwise_not(t(I), out=out),
    "isin": lambda lib, t, out: lib.isin(t(F), t([3.0, -1.0]), out=out),
    "aminmax": _dim("aminmax", dim=1),
    "kthvalue": _dim("kthvalue", 2, 1),
    "topk": _dim("topk", 2),
    "msort": _dim("msort"),
    "argsort": _dim("argsort", dim=1, stable=False),
    "diff": _dim("diff"),
    "renorm": _dim("renorm", 2, 0, 1.0),
    "histc": _dim("histc", bins=4),
    "norm": _dim("norm", 2, 1),
    "clamp": _dim("clamp", -1.0, 1.0),
    "clip": _dim("clip", -1.0, 1.0),
    "clamp_min": _dim("clamp_min", 0.0),
    "clamp_max": _dim("clamp_max", 0.0),
    "hardshrink": _dim("hardshrink", 1.0),
    "threshold": _dim("threshold", 1.0, -5.0),
    "tril": _dim("tril"),
    "triu": _dim("triu", 1),
    "diag": _dim("diag"),
    "nonzero": _dim("nonzero"),
    "lerp": lambda lib, t, out: lib.lerp(t(F), t(G), 0.25, out=out),
    "addcdiv": lambda lib, t, out: lib.addcdiv(t(F), t(G), t(P), value=2, out=out),
    "addcmul": lambda lib, t, out: lib.addcmul(t(F), t(G), t(P), value=2, out=out),
    "where": lambda lib, t, out: lib.where(lib.tensor(F) > 0, t(F), t(G), out=out),
    "masked_select": lambda lib, t, out: lib.masked_select(t(F), lib.tensor(F) > 0, out=out),
    "take": lambda lib, t, out: lib.take(t(F), lib.tensor([0, 5, 2]), out=out),
    "take_along_dim": lambda lib, t, out: lib.take_along_dim(
        t(F), lib.tensor([[2, 0], [1, 1]]), 1, out=out),
    "index_select": lambda lib, t, out: lib.index_select(t(F), 1, lib.tensor([2, 0]), out=out),
    "gather": lambda lib, t, out: lib.gather(t(F), 1, lib.tensor([[2, 0], [1, 1]]), out=out),
    "scatter": lambda lib, t, out: lib.scatter(t(F), 1, lib.tensor([[2], [0]]), t([[9.0], [8.0]]),
                                               out=out),
    "scatter_add": lambda lib, t, out: lib.scatter_add(t(F), 1, lib.tensor([[2], [0]]),
                                                       t([[9.0], [8.0]]), out=out),
    "scatter_reduce": lambda lib, t, out: lib.scatter_reduce(
        t(F), 1, lib.tensor([[2], [0]]), t([[9.0], [8.0]]), "amax", out=out),
    "index_add": lambda lib, t, out: lib.index_add(t(F), 1, lib.tensor([2, 0]),
                                                   t([[1.0, 2.0], [3.0, 4.0]]), out=out),
    "index_copy": lambda lib, t, out: lib.index_copy(t(F), 1, lib.tensor([2, 0]),
                                                     t([[1.0, 2.0], [3.0, 4.0]]), out=out),
    "searchsorted": lambda lib, t, out: lib.searchsorted(lib.tensor([0.0, 1.0, 2.0]), t(F),
                                                         out=out),
    "bucketize": lambda lib, t, out: lib.bucketize(t(F), lib.tensor([0.0, 1.0, 2.0]), out=out),
    "matmul": lambda lib, t, out: lib.matmul(t(F), t(SPD), out=out),
    "mm": lambda lib, t, out: lib.mm(t(F), t(SPD), out=out),
    "bmm": lambda lib, t, out: lib.bmm(t([F]), t([SPD]), out=out),
    "mv": lambda lib, t, out: lib.mv(t(F), t(V), out=out),
    "dot": lambda lib, t, out: lib.dot(t(V), t(F[0]), out=out),
    "vdot": lambda lib, t, out: lib.vdot(t(V), t(F[0]), out=out),
    "inner": lambda lib, t, out: lib.inner(t(F), t(G), out=out),
    "outer": lambda lib, t, out: lib.outer(t(V), t(F[1]), out=out),
    "ger": lambda lib, t, out: lib.ger(t(V), t(F[1]), out=out),
    "kron": lambda lib, t, out: lib.kron(t(F), t(P), out=out),
    "tensordot": lambda lib, t, out: lib.tensordot(t(F), t(SPD), 1, out=out),
    "cross": lambda lib, t, out: lib.cross(t(F), t(G), dim=1, out=out),
    "addmm": lambda lib, t, out: lib.addmm(t(F), t(F), t(SPD), beta=0.5, out=out),
    "addmv": lambda lib, t, out: lib.addmv(t(V), t(SPD), t(V), alpha=2, out=out),
    "addr": lambda lib, t, out: lib.addr(t(F), t(V[:2]), t(V), out=out),
    "addbmm": lambda lib, t, out: lib.addbmm(t(F), t([F, G]), t([SPD, SPD]), out=out),
    "baddbmm": lambda lib, t, out: lib.baddbmm(t([F]), t([F]), t([SPD]), out=out),
    "inverse": lambda lib, t, out: lib.inverse(t(SPD), out=out),
    "matrix_power": lambda lib, t, out: lib.matrix_power(t(SPD), 3, out=out),
    "slogdet": lambda lib, t, out: lib.slogdet(t(SPD), out=out),
    "arange": lambda lib, t, out: lib.arange(1, 7, out=out),
    "linspace": lambda lib, t, out: lib.linspace(0, 1, 6, out=out),
    "zeros": lambda lib, t, out: lib.zeros(2, 3, out=out),
    "ones": lambda lib, t, out: lib.ones(2, 3, out=out),
    "full": lambda lib, t, out: lib.full((2, 3), 1.5, out=out),
    "eye": lambda lib, t, out: lib.eye(2, 3, out=out),
    "empty": lambda lib, t, out: lib.empty(2, 3, out=out),
    "rand": lambda lib, t, out: lib.rand(2, 3, out=out),
    "randn": lambda lib, t, out: lib.randn(2, 3, out=out),
    "randint": lambda lib, t, out: lib.randint(0, 5, (2, 3), out=out),
    "randperm": lambda lib, t, out: lib.randperm(6, out=out),
    "logspace": lambda lib, t, out: lib.logspace(0, 2, 5, out=out),
    "range": lambda lib, t, out: lib.range(1, 4, out=out),  # (an int out and a 0.5 step: SIGFPE)
    "complex": lambda lib, t, out: lib.complex(t(F), t(G), out=out),
    "polygamma": lambda lib, t, out: lib.polygamma(1, t(P), out=out),
    "i0": _unary("i0"),
    "igamma": _binary("igamma", P, F),
    "igammac": _binary("igammac", P, F),
    "mvlgamma": lambda lib, t, out: lib.mvlgamma(t(SPD), 2, out=out),
    "gcd": _binary("gcd", I, [[2, 4, 9], [8, 15, 6]]),
    "lcm": _binary("lcm", I, [[2, 4, 9], [8, 15, 6]]),
    "chain_matmul": lambda lib, t, out: lib.chain_matmul(t(SPD), t(SPD), t(SPD), out=out),
    "quantile": lambda lib, t, out: lib.quantile(t(F), 0.3, dim=1, out=out),
    "nanquantile": lambda lib, t, out: lib.nanquantile(t(F), 0.3, dim=1, out=out),
    "histogram": lambda lib, t, out: lib.histogram(t(F), 4, out=out),
    "qr": lambda lib, t, out: lib.qr(t(SPD), out=out),
    "svd": lambda lib, t, out: lib.svd(t(F), out=out),
    # the random samplers, where a draw is certain
    "normal": lambda lib, t, out: lib.normal(t(F), 0.0, out=out),
    "bernoulli": lambda lib, t, out: lib.bernoulli(t([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]), out=out),
    "multinomial": lambda lib, t, out: lib.multinomial(t([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]), 1,
                                                       out=out),
    "polar": lambda lib, t, out: lib.polar(t(P), t(F), out=out),
})
LINALG = {
    "cholesky": _linalg("cholesky", SPD),
    "cross": _linalg("cross", F, G),
    "det": _linalg("det", SPD),
    "eigh": _linalg("eigh", SPD),
    "eigvalsh": _linalg("eigvalsh", SPD),
    "inv": _linalg("inv", SPD),
    "matmul": _linalg("matmul", F, SPD),
    "matrix_norm": _linalg("matrix_norm", SPD),
    "matrix_power": _linalg("matrix_power", SPD, n=2),
    "norm": _linalg("norm", F),
    "pinv": _linalg("pinv", F),
    "qr": _linalg("qr", SPD),
    "slogdet": _linalg("slogdet", SPD),
    "solve": _linalg("solve", SPD, [[1.0], [2.0], [3.0]]),
    "solve_triangular": _linalg("solve_triangular", SPD, [[1.0], [2.0], [3.0]], upper=True),
    "svd": _linalg("svd", F),
    "svdvals": _linalg("svdvals", F),
    "vector_norm": _linalg("vector_norm", F),
    "multi_dot": lambda lib, t, out: lib.linalg.multi_dot([t(F), t(SPD)], out=out),
    "vecdot": _linalg("vecdot", F, G),
    "matrix_rank": _linalg("matrix_rank", SPD),
    "cholesky_ex": _linalg("cholesky_ex", SPD),
    "inv_ex": _linalg("inv_ex", SPD),
    "lu": _linalg("lu", SPD),
    "lu_factor": _linalg("lu_factor", SPD),
    "lu_factor_ex": _linalg("lu_factor_ex", SPD),
    "lu_solve": lambda lib, t, out: lib.linalg.lu_solve(*lib.linalg.lu_factor(t(SPD)),
                                                        t([[1.0], [2.0], [3.0]]), out=out),
    "solve_ex": _linalg("solve_ex", SPD, [[1.0], [2.0], [3.0]]),
    "cond": _linalg("cond", SPD),
    "eig": _linalg("eig", SPD),
    "eigvals": _linalg("eigvals", SPD),
    "householder_product": _linalg("householder_product", SPD, [1.0, -2.0]),
    "ldl_factor": _linalg("ldl_factor", SPD),
    "ldl_factor_ex": _linalg("ldl_factor_ex", SPD),
    "ldl_solve": lambda lib, t, out: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(t(SPD)),
                                                          t([[1.0], [2.0], [3.0]]), out=out),
    "tensorinv": _linalg("tensorinv", SPD, ind=1),
    "tensorsolve": _linalg("tensorsolve", SPD, V),
}
RECIPES.update({"linalg." + name: fn for name, fn in LINALG.items()})
RECIPES["orgqr"] = lambda lib, t, out: lib.orgqr(t(SPD), t([1.0, -2.0]), out=out)
# values that depend on the random stream or on uninitialised memory: compared by shape/dtype
UNVALUED = {"empty", "rand", "randn", "randint", "randperm"}
# decompositions whose vectors are fixed only up to sign: compared in absolute value
SIGNED = {"linalg.eigh", "linalg.qr", "linalg.svd", "qr", "svd"}


def _pyi_out_names(path):
    """The functions of a ``.pyi`` stub with an overload that takes ``out``, and all of its."""
    tree = ast.parse(open(path).read())
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    return ({f.name for f in functions if any(a.arg == "out" for a in f.args.args
                                               + f.args.kwonlyargs)},
            {f.name for f in functions})


def _torch_out_names():
    """Every function ember exports (top level, ``linalg``, ``nn.functional``) whose PyTorch
    counterpart takes ``out=``."""
    takes, native = _pyi_out_names(os.path.join(os.path.dirname(torch.__file__), "_C",
                                                "_VariableFunctions.pyi"))
    names = set()
    for prefix, e_mod, t_mod in (("", ember, torch), ("nn.functional.", ember.nn.functional,
                                                      torch.nn.functional)):
        for name in dir(e_mod):
            t_fn = getattr(t_mod, name, None)
            if name.startswith("_") or isinstance(t_fn, type) or not callable(t_fn):
                continue
            if prefix == "" and name in native:
                if name in takes:
                    names.add(name)
                continue
            try:
                if "out" in inspect.signature(t_fn).parameters:
                    names.add(prefix + name)
            except (TypeError, ValueError):  # a C++ function without a stub: by its docs
                if "out=" in (t_fn.__doc__ or "").strip().split("\n\n")[0]:
                    names.add(prefix + name)
    for name in dir(ember.linalg):
        t_fn = getattr(torch.linalg, name, None)
        if not name.startswith("_") and callable(t_fn) and not isinstance(t_fn, type) and \
                "out=" in (t_fn.__doc__ or "").strip().split("\n\n")[0]:
            names.add("linalg." + name)
    return names


RECIPES["nn.functional.normalize"] = lambda lib, t, out: lib.nn.functional.normalize(t(F),
                                                                                     out=out)


def test_every_out_function_has_a_recipe():
    """Each function PyTorch gives ``out=`` and ember exports is in the sweep, and nothing else
    (a recipe for a function without ``out=`` in PyTorch would test nothing)."""
    names = _torch_out_names()
    assert sorted(names - set(RECIPES)) == []
    assert sorted(set(RECIPES) - names) == []


def _call(lib, name, out, requires_grad=False):
    def make(data):
        floats = np.asarray(data).dtype.kind == "f"
        return lib.tensor(data, requires_grad=requires_grad and floats)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = outcome(RECIPES[name], lib, make, out)
    if isinstance(result, Raised):
        return None, result, _texts(caught)
    return result, None, _texts(caught)


# PyTorch gives these once per process (TORCH_WARN_ONCE), so whether its call shows them
# depends on what ran before; ember's deprecation warnings are checked where the functions are.
_ONCE = ("torch.qr is deprecated", "torch.chain_matmul is deprecated")


def _texts(caught):
    texts = [str(w.message).split(" (Triggered internally")[0] for w in caught]
    return [t for t in texts if not t.startswith(_ONCE)]


def _plain(lib, name):
    """The result of ``name`` without ``out=`` (a tensor or a tuple of them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch.range's deprecation: not what is tested here)
        return RECIPES[name](lib, lib.tensor, None)


def _outs(lib, name, shape, dtype):
    """``out`` for ``name``: like its result (a tuple for a tuple result), the first of
    ``shape`` (None: the result's) and of ``dtype`` (None: the result's)."""
    result = _plain(torch, name)
    parts = result if isinstance(result, tuple) else (result,)
    made = []
    for k, part in enumerate(parts):
        size = part.shape if shape is None or k else shape
        kind = str(part.dtype).split(".")[1] if dtype is None or k else dtype
        made.append(lib.zeros(tuple(size), dtype=getattr(lib, kind)))
    return tuple(made) if isinstance(result, tuple) else made[0]


def _values(t, name):
    a = t.detach().numpy()
    return np.abs(a) if name in SIGNED else a


# PyTorch resizes these two's values as if kept the reduced dim, and its warning names the
# shapes with it ([7, 1] for [7]); ember names the shapes as given
_KEEPDIM_WORDS = pytest.mark.xfail(strict=True, reason="resize warning names keepdim shapes")


# (out's shape, out's dtype): None for the result's; an empty out takes any shape quietly;
# a wrong shape is resized, with a warning (twice when an elementwise op also casts)
_OUTS = [(None, None), (None, "float64"), (None, "int64"), ((0,), None), ((7,), None),
         ((7,), "float64"), ((7,), "int64")]


def _cases():
    for name in sorted(RECIPES):
        for shape, dtype in _OUTS:
            marks = [_KEEPDIM_WORDS] if name in ("kthvalue", "mode") and shape == (7,) \
                and dtype is None else []
            yield pytest.param(name, shape, dtype, marks=marks)


@pytest.mark.parametrize("name,shape,dtype", list(_cases()))
def test_out_like_pytorch(name, shape, dtype):
    e_out, t_out = _outs(ember, name, shape, dtype), _outs(torch, name, shape, dtype)
    e_res, e_err, e_warn = _call(ember, name, e_out)
    t_res, t_err, t_warn = _call(torch, name, t_out)
    assert e_err == t_err
    assert e_warn == t_warn
    if t_err is not None:
        return
    e_parts, t_parts = (e_out, t_out) if isinstance(t_out, tuple) else ((e_out,), (t_out,))
    if isinstance(t_out, tuple):  # the parts of out come back, as PyTorch's named tuple
        assert getattr(e_res, "_fields", None) == getattr(t_res, "_fields", None)
        assert len(e_res) == len(e_out) and all(r is o for r, o in zip(e_res, e_out))
    else:
        assert e_res is e_out
    for e, t in zip(e_parts, t_parts):
        assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
        if name not in UNVALUED:
            np.testing.assert_allclose(_values(e, name), _values(t, name), rtol=1e-5,
                                       atol=1e-6)


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_out_with_inputs_requiring_grad_like_pytorch(name):
    e_out, t_out = _outs(ember, name, None, None), _outs(torch, name, None, None)
    e_res, e_err, _ = _call(ember, name, e_out, requires_grad=True)
    t_res, t_err, _ = _call(torch, name, t_out, requires_grad=True)
    assert e_err == t_err


def test_every_out_rule_names_an_ember_function_that_takes_out():
    """A rule whose function ember does not export (renamed, moved) would be dropped
    silently by ``add_out``: each one resolves, and takes ``out``."""
    from ember._out import RULES
    for key in RULES:
        owner, _, name = key.rpartition(".")
        fn = getattr(ember.nn.functional if owner == "nn.functional" else
                     getattr(ember, owner) if owner else ember, name)
        assert "out" in inspect.signature(fn).parameters, key
