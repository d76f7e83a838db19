"""``ember.func.vmap``: every op spec (``tests/spec_modules.py``), mapped over a batch,
equals the loop over its samples (values and gradients), and equals PyTorch's vmap; the
pointwise, reduction, shape, matmul and indexing families run by batching rules (no
per-sample loop); the API's argument handling and error texts against PyTorch's; per-sample
gradients.
"""
import numpy as np
import pytest

import ember
from ember.func import grad, vmap
from ember.ops import batching
from ember.ops.registry import OPS, defop

from ..opspec import _outputs, inputs, xfail_marks
from ..spec_modules import FAMILY_SPECS as _FAMILIES
from ..spec_modules import INDEXING_SPECS, NN_SPECS, OTHER_SPECS, SURFACE_SPECS

try:
    import torch
except ImportError:
    torch = None

B = 3
SPECS = _FAMILIES + INDEXING_SPECS + NN_SPECS + SURFACE_SPECS + OTHER_SPECS
FAMILY_SPECS = {id(s) for s in _FAMILIES + INDEXING_SPECS}  # must use batching rules


def _samples(lib, spec, shapes):
    """B samples of the spec's inputs (different seeds), float64, not requiring grad."""
    per = [inputs(lib, spec, shapes, lib.float64, seed=s) for s in range(B)]
    return [[x.detach() for x in sample] for sample in per]


def _mapped_args(lib, samples, in_dims):
    """The vmap arguments: mapped inputs stacked along dim 0, the others sample 0's."""
    return [lib.stack([s[k] for s in samples]) if d == 0 else samples[0][k]
            for k, d in enumerate(in_dims)]


def _in_dims_cases(spec):
    out = []
    for shp in spec.shapes:
        n = len(shp)
        for dims in {(0,) * n, (0,) + (None,) * (n - 1), (None,) * (n - 1) + (0,)}:
            out.append(pytest.param(spec, shp, dims,
                                    id=f"{spec.name}-{'x'.join(map(str, shp))}-{dims}",
                                    marks=xfail_marks(spec, "vmap")))
    return out


ALL_CASES = [c for s in SPECS for c in _in_dims_cases(s)]


def _torch_vmap(spec, shapes, in_dims):
    """PyTorch's vmap of the spec on the same data: its outputs, or the exception it raised."""
    samples = _samples(torch, spec, shapes)
    args = _mapped_args(torch, samples, in_dims)
    try:
        return _outputs(torch.func.vmap(lambda *xs: spec.fn(torch, *xs), in_dims=in_dims)(*args))
    except Exception as e:  # noqa: BLE001 - whatever PyTorch refuses, ember must refuse
        return e


@pytest.mark.parametrize("spec,shapes,in_dims", ALL_CASES)
def test_vmap_equals_the_loop_over_samples_and_pytorch(spec, shapes, in_dims):
    expected = _torch_vmap(spec, shapes, in_dims) if torch is not None else None
    samples = _samples(ember, spec, shapes)
    args = _mapped_args(ember, samples, in_dims)
    for a, d in zip(args, in_dims):
        if d == 0 and a.is_floating_point():
            a.requires_grad_()
    f = vmap(lambda *xs: spec.fn(ember, *xs), in_dims=in_dims)
    before = dict(batching.fallbacks)
    if isinstance(expected, Exception):
        # PyTorch refuses (in-place writes of a batch into an unbatched tensor, randomness,
        # data-dependent shapes, autograd.grad inside vmap): ember refuses too, or (where it
        # can do more) gives exactly the loop's result.
        try:
            got = _outputs(f(*args))
        except Exception:  # noqa: BLE001
            return
        expected = None
    else:
        got = _outputs(f(*args))
    looped = {op for op, n in batching.fallbacks.items() if n > before.get(op, 0)}
    per = [_outputs(spec.fn(ember, *[a[i] if d == 0 else a for a, d in zip(args, in_dims)]))
           for i in range(B)]
    assert len(got) == len(per[0])
    for j, out in enumerate(got):
        want = ember.stack([p[j] for p in per])
        assert out.shape == want.shape and out.dtype == want.dtype
        np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(),
                                   rtol=1e-12, atol=1e-12)
        if expected is not None and spec.name not in TORCH_VMAP_DIFFERS:
            np.testing.assert_allclose(out.detach().numpy(),
                                       expected[j].detach().numpy(force=True),
                                       rtol=1e-10 * spec.tol, atol=1e-12 * spec.tol)
    if id(spec) in FAMILY_SPECS and all(shapes):  # (0-d samples with a dim argument loop)
        assert looped <= DECLARED_LOOP | PER_SAMPLE_LOOP, \
            f"looped without declaring batch=\"loop\": {sorted(looped - DECLARED_LOOP)}"
    # gradients through the batched computation: the same as through the loop
    floats = [o for o in got if o.requires_grad]
    if not floats:
        return
    rng = np.random.default_rng(5)
    vs = [ember.tensor(rng.uniform(-1, 1, tuple(o.shape))) for o in floats]
    mapped = [a for a in args if a.requires_grad]
    g_vmap = ember.autograd.grad(floats, mapped, vs, allow_unused=True)
    per_floats = [[o for o in p if o.requires_grad] for p in per]
    outs = [ember.stack([p[j] for p in per_floats]) for j in range(len(floats))]
    g_loop = ember.autograd.grad(outs, mapped, vs, allow_unused=True)
    for a, b, x in zip(g_vmap, g_loop, mapped):
        a = ember.zeros_like(x) if a is None else a  # (an input a rule ignores: beta=0)
        b = ember.zeros_like(x) if b is None else b
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


# Where PyTorch 2.13's vmap disagrees with its own loop over samples (ember agrees with the
# loop): roll() of 0-d samples rolls across the batch; index_select with a 0-d index keeps the
# whole dim; solve(A, b) with a batched A and a vector b treats b as a batch of matrices;
# index_fill with a per-sample value fills every sample with one of them.
TORCH_VMAP_DIFFERS = {"roll", "index_select_0d_index", "solve", "index_fill_tensor"}

# The ops that run the per-sample loop opted into it: ``defop(..., batch="loop")``; a rule of
# its own (``batching.single``, ``moved``) loops only where it says (another batched input, a
# 0-d sample with a dim). Functions with a per-sample rule of their own may loop too:
# ``x[mask]`` with boolean masks that vary per sample (``getitem``).
DECLARED_LOOP = {op.name for op in OPS if op.batch == "loop"}
PER_SAMPLE_LOOP = {"getitem"}


def test_every_op_declares_its_batching_rule():
    """``defop(..., batch=...)``: a kind of ``batching.KINDS`` or a rule function; the loop is
    an explicit opt-in, never what an op gets by saying nothing."""
    for op in OPS:
        assert op.batch is not None, f"{op.name} declares no batching rule"
        assert op.batch in batching.KINDS if isinstance(op.batch, str) else callable(op.batch), \
            (op.name, op.batch)


def test_an_op_without_a_batching_rule_refuses_under_vmap():
    op = defop("undeclared_probe", n_in=1)(lambda xp, input: input * 2)
    try:
        with pytest.raises(RuntimeError, match="undeclared_probe declares no batching rule"):
            vmap(op)(ember.ones(3, 2))
        assert op(ember.ones(2)).tolist() == [2.0, 2.0]  # outside vmap it runs
    finally:
        OPS.remove(op)


# --------------------------------------------------------------------------- the API


def _both(case):
    """``case(lib)`` on ember and on PyTorch: (result or exception) for each."""
    out = []
    for lib in (ember, torch):
        try:
            out.append(case(lib))
        except Exception as e:  # noqa: BLE001
            out.append(e)
    return out


X = np.arange(6.0).reshape(2, 3)
ERRORS = {
    "randomness_value": lambda L: L.func.vmap(lambda t: t, randomness="bad"),
    "random_op": lambda L: L.func.vmap(lambda t: t + L.rand(3))(L.tensor(X)),
    "item": lambda L: L.func.vmap(lambda t: t.sum().item())(L.tensor(X)),
    "control_flow": lambda L: L.func.vmap(lambda t: t if t.sum() > 0 else -t)(L.tensor(X)),
    "in_dim_range": lambda L: L.func.vmap(lambda t: t, in_dims=2)(L.tensor(X)),
    "in_dims_structure": lambda L: L.func.vmap(lambda t: t, in_dims=(0, 0))(L.tensor(X)),
    "in_dims_type": lambda L: L.func.vmap(lambda t: t, in_dims=None)(L.tensor(X)),
    "in_dims_list": lambda L: L.func.vmap(lambda t: t, in_dims=[0])(L.tensor(X)),
    "in_dim_float": lambda L: L.func.vmap(lambda t: t, in_dims=(1.5,))(L.tensor(X)),
    "nothing_mapped": lambda L: L.func.vmap(lambda t: t, in_dims=(None,))(L.tensor(X)),
    "sizes_differ": lambda L: L.func.vmap(L.add)(L.tensor(X), L.ones(3, 3)),
    "non_tensor_input": lambda L: L.func.vmap(lambda t: t)(3),
    "zero_dim_input": lambda L: L.func.vmap(lambda t: t)(L.tensor(1.0)),
    "no_inputs": lambda L: L.func.vmap(lambda: L.ones(1))(),
    "non_tensor_output": lambda L: L.func.vmap(lambda t: 3)(L.tensor(X)),
    "none_output": lambda L: L.func.vmap(lambda t: None)(L.tensor(X)),
    "out_dims_type": lambda L: L.func.vmap(lambda t: t, out_dims="a")(L.tensor(X)),
    "out_dims_structure": lambda L: L.func.vmap(lambda t: [t, t], out_dims=(0, 0))(L.tensor(X)),
    "out_dim_range": lambda L: L.func.vmap(lambda t: t, out_dims=3)(L.tensor(X)),
    "out_dim_none_batched": lambda L: L.func.vmap(lambda t: t, out_dims=None)(L.tensor(X)),
    "chunk_size": lambda L: L.func.vmap(lambda t: t, chunk_size=0),
    "backward_inside": lambda L: L.func.vmap(lambda t: t.sum().backward())(
        L.tensor(X, requires_grad=True)),
    "write_batch_into_unbatched": lambda L: L.func.vmap(lambda t: L.zeros(3).add_(t))(
        L.tensor(X)),
}


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_pytorchs(name):
    got, expected = _both(ERRORS[name])
    assert isinstance(expected, Exception), expected
    assert type(got) is type(expected) and str(got) == str(expected)


RESULTS = {
    "in_dims_per_arg": lambda L: L.func.vmap(L.mul, in_dims=(1, None))(
        L.tensor(X), L.tensor([2.0, 3.0])),
    "in_dims_nested": lambda L: L.func.vmap(lambda d: d["a"] * d["b"][1],
                                            in_dims=({"a": 0, "b": (None, 1)},))(
        {"a": L.tensor(X), "b": (L.ones(1), L.tensor(X).t())}),
    "negative_in_dim": lambda L: L.func.vmap(L.sum, in_dims=-1)(L.tensor(X)),
    "out_dims": lambda L: L.func.vmap(lambda t: (t * 2, t.sum()), out_dims=(1, 0))(
        L.tensor(X)),
    "out_dims_dict": lambda L: L.func.vmap(lambda t: {"a": t}, out_dims={"a": 1})(
        L.tensor(X)),
    "unbatched_output": lambda L: L.func.vmap(lambda t: L.ones(2))(L.tensor(X)),
    "unbatched_output_none": lambda L: L.func.vmap(lambda t: (t, L.ones(2)),
                                                   out_dims=(0, None))(L.tensor(X)),
    "kwargs_not_mapped": lambda L: L.func.vmap(lambda t, k=1: t * k)(L.tensor(X), k=3.0),
    "nested": lambda L: L.func.vmap(L.func.vmap(lambda a, b: a * b))(
        L.tensor(X), L.tensor(X) + 1),
    "nested_in_dims": lambda L: L.func.vmap(L.func.vmap(L.dot, in_dims=(0, None)),
                                            in_dims=(None, 0))(L.tensor(X), L.tensor(X)),
    "nested_outer_batched_only": lambda L: L.func.vmap(
        lambda a: L.func.vmap(lambda b: a * b)(L.tensor([1.0, 10.0])))(L.tensor(X)),
    "top_level_alias": lambda L: L.vmap(L.outer)(L.tensor(X), L.tensor(X)),
    "chunks": lambda L: L.func.vmap(lambda t: (t.sum(), t * 2), chunk_size=1, out_dims=(0, 1))(
        L.tensor(X)),
    "same_randomness": lambda L: L.func.vmap(lambda t: L.rand(3) * 0 + t,
                                             randomness="same")(L.tensor(X)),
    "empty_batch": lambda L: L.func.vmap(lambda t: t * 2)(L.zeros(0, 3)),
    "matmul_cases": lambda L: L.func.vmap(lambda a, b: (a @ b, a @ b[:, 0], b.t() @ a))(
        L.tensor(X).reshape(2, 3, 1).expand(2, 3, 3), L.tensor(X).reshape(2, 3, 1)),
    "jacrev_per_sample": lambda L: L.func.vmap(L.func.jacrev(L.sin))(L.tensor(X)),
    "jacfwd_per_sample": lambda L: L.func.vmap(L.func.jacfwd(lambda t: t.sin() * t.sum()))(
        L.tensor(X)),
    "hessian_per_sample": lambda L: L.func.vmap(L.func.hessian(
        lambda t: (t.sin() * t ** 2).sum()))(L.tensor(X)),
    "jvp_per_tangent": lambda L: L.func.vmap(lambda v: L.func.jvp(
        lambda t: t.exp() * t.sum(), (L.tensor(X[0]),), (v,))[1])(L.tensor(X)),
    "vjp_per_sample": lambda L: L.func.vmap(lambda t: L.func.vjp(L.tanh, t)[1](t)[0])(
        L.tensor(X)),
    "grad_of_grad_per_sample": lambda L: L.func.vmap(L.func.grad(
        lambda t: L.func.grad(lambda s: (s ** 3).sum())(t).sin().sum()))(L.tensor(X)),
    "jacrev_of_vmap": lambda L: L.func.jacrev(L.func.vmap(lambda t: t.sin() * t.sum()))(
        L.tensor(X)),
    "grad_of_vmap": lambda L: L.func.grad(lambda w: L.func.vmap(
        lambda x: (w * x).sin().sum())(L.tensor(X)).sum())(L.tensor([1.0, 2.0, 3.0])),
}


def _same_as_pytorchs(case):
    """``case`` gives the same structure of tensors (or Nones) on ember as on PyTorch."""
    from ember.utils._pytree import tree_flatten
    got, expected = _both(case)
    assert not isinstance(got, Exception), got
    got_leaves, got_spec = tree_flatten(got)
    exp_leaves, exp_spec = torch.utils._pytree.tree_flatten(expected)
    assert str(got_spec) == str(exp_spec)
    for g, e in zip(got_leaves, exp_leaves):
        assert (g is None) == (e is None)
        if g is not None:
            assert g.shape == e.shape and str(g.dtype) == str(e.dtype)
            assert g.requires_grad == e.requires_grad
            np.testing.assert_allclose(g.detach().numpy(), e.detach().numpy(), rtol=1e-6)


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
@pytest.mark.parametrize("name", sorted(RESULTS))
def test_results_are_pytorchs(name):
    _same_as_pytorchs(RESULTS[name])


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
@pytest.mark.parametrize("key", ["i", "i_then_slice", "slice_then_i", "i_j", "i_slice_j",
                                 "ij_then_none", "matrix_i", "shared_and_own"])
def test_per_sample_index_tensors_use_a_batching_rule(key):
    rng = np.random.default_rng(0)
    xn, i_n, j_n = rng.normal(size=(3, 4, 5, 2)), rng.integers(-4, 4, (3, 2)), \
        rng.integers(0, 5, (3, 2))
    keys = {"i": lambda x, i, j: x[i], "i_then_slice": lambda x, i, j: x[i, 1:],
            "slice_then_i": lambda x, i, j: x[:, j], "i_j": lambda x, i, j: x[i, j],
            "i_slice_j": lambda x, i, j: x[i, :, j % 2],
            "ij_then_none": lambda x, i, j: x[i, j, None],
            "matrix_i": lambda x, i, j: x[i.reshape(2, 1) + 0 * j.reshape(1, 2)],
            "shared_and_own": lambda x, i, j: x[:, j, [1, 0]]}
    out = []
    for lib in (ember, torch):
        x = lib.tensor(xn, requires_grad=True)
        batching.fallbacks.clear()
        y = lib.func.vmap(keys[key])(x, lib.tensor(i_n), lib.tensor(j_n))
        (g,) = lib.autograd.grad((y * y).sum(), x)
        out.append((y.detach().numpy(), g.numpy()))
        if lib is ember:
            assert not batching.fallbacks
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b)


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
@pytest.mark.parametrize("in_dims", [(0, 0), (None, 0), (0, None)])
@pytest.mark.parametrize("name", ["gather", "gather_dim1", "take_along_dim"])
def test_gather_with_an_index_per_sample_is_one_call(name, in_dims):
    rng = np.random.default_rng(1)
    xn, i_n = rng.normal(size=(3, 4, 5)), rng.integers(0, 4, (3, 2, 5))
    out = []
    for lib in (ember, torch):
        fn = {"gather": lambda x, i: x.gather(0, i),
              "gather_dim1": lambda x, i: lib.gather(x, 1, i.remainder(5)),
              "take_along_dim": lambda x, i: x.take_along_dim(i, -2)}[name]
        x = lib.tensor(xn, requires_grad=True)
        batching.fallbacks.clear()
        args = [x if in_dims[0] == 0 else x[0], lib.tensor(i_n if in_dims[1] == 0 else i_n[0])]
        y = lib.func.vmap(fn, in_dims=in_dims)(*args)
        (g,) = lib.autograd.grad((y * y).sum(), x)
        out.append((y.detach().numpy(), g.numpy()))
        if lib is ember:
            assert not batching.fallbacks
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-14)


# Functions that read an index (or mask) tensor as data, f(x, src, index, mask)
INDEX_READERS = {
    "index_select": lambda L, x, s, i, m: x.index_select(0, i[0]) * s.sum(),
    "take": lambda L, x, s, i, m: x.take(i) * s.sum(),
    "index_add": lambda L, x, s, i, m: x.index_add(0, i[0, :2], s),
    "index_copy": lambda L, x, s, i, m: x.index_copy(0, i[0, :1], s[:1]),
    "index_fill": lambda L, x, s, i, m: x.index_fill(0, i[0], 1.5) * s.sum(),
    "index_put": lambda L, x, s, i, m: x.index_put((i[0],), s[0]),
    "index_put_accumulate": lambda L, x, s, i, m: x.index_put((i[0, :2], i[1, :2]), s[0, :2],
                                                              accumulate=True),
    "put": lambda L, x, s, i, m: x.put(i[0, :2], s[0, :2], accumulate=True),
    "masked_scatter": lambda L, x, s, i, m: x.masked_scatter(m, s.reshape(-1).repeat(2)),
    "scatter": lambda L, x, s, i, m: L.scatter(x, 0, i, s),
    "scatter_value": lambda L, x, s, i, m: x.scatter(0, i, 2.5),
    "scatter_add": lambda L, x, s, i, m: L.scatter_add(x, 0, i, s),
    "scatter_add_": lambda L, x, s, i, m: x.scatter_add_(0, i, s),
    "scatter_reduce": lambda L, x, s, i, m: x.scatter_reduce(0, i, s, "amax",
                                                             include_self=False),
}


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
@pytest.mark.parametrize("in_dims", [(0, 0, 0), (None, None, 0), (0, None, 0), (None, 0, None)])
@pytest.mark.parametrize("name", list(INDEX_READERS))
def test_functions_reading_an_index_per_sample(name, in_dims):
    """An index or mask per sample: each sample reads its own (they run per sample; read
    whole, a batch of indices once indexed every sample: index_select, take and index_put
    gave wrong values, the others crashed); a shared one runs the ops' own rules. An in-place
    write into a shared tensor is refused, as PyTorch refuses it."""
    rng = np.random.default_rng(0)
    xn, sn = rng.normal(size=(3, 4, 5)), rng.normal(size=(3, 2, 5))
    i_n, m_n = rng.integers(0, 4, (3, 2, 5)), rng.normal(size=(3, 4, 5)) > 0
    out = []
    for lib in (ember, torch):
        x, src = (lib.tensor(a, requires_grad=True) for a in (xn, sn))
        args = [x * 1 if in_dims[0] == 0 else x[0] * 1, src if in_dims[1] == 0 else src[0]] + \
            [lib.tensor(a if in_dims[2] == 0 else a[0]) for a in (i_n, m_n)]
        f = lib.func.vmap(lambda *a: INDEX_READERS[name](lib, *a), in_dims=in_dims + in_dims[2:])
        if name == "scatter_add_" and in_dims[0] is None:
            with pytest.raises(RuntimeError):
                f(*args)
            continue
        y = f(*args)
        grads = lib.autograd.grad((y * y).sum(), [x, src], allow_unused=True)
        out.append([y.detach().numpy()] + [g if g is None else g.numpy() for g in grads])
    for a, b in zip(*out):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-13)


def test_different_randomness_draws_per_sample_and_is_reproducible():
    f = vmap(lambda t: t + ember.rand(3), randomness="different")
    ember.manual_seed(0)
    a = f(ember.zeros(4, 3))
    ember.manual_seed(0)
    b = f(ember.zeros(4, 3))
    assert ember.equal(a, b)
    assert len({tuple(row) for row in a.tolist()}) == 4  # four different draws
    same = vmap(lambda t: t + ember.rand(3), randomness="same")(ember.zeros(4, 3))
    assert len({tuple(row) for row in same.tolist()}) == 1


def test_batched_tensors_print_as_pytorchs():
    printed = {}
    for lib in (ember, torch) if torch is not None else (ember,):
        lines = []

        def f(t, lines=lines):
            lines.append(f"{str(t)}|{t.shape}|{t.dim()}")
            return t
        lib.func.vmap(lib.func.vmap(f))(lib.arange(6.0).reshape(2, 3))
        lib.func.vmap(f)(lib.arange(6.0).reshape(2, 3))
        printed[lib.__name__] = "\n".join(lines)
    assert printed["ember"] == (
        "BatchedTensor(lvl=2, bdim=0, value=\n    BatchedTensor(lvl=1, bdim=0, value=\n"
        "        tensor([[0., 1., 2.],\n                [3., 4., 5.]])\n    )\n)|"
        "torch.Size([])|0\n"
        "BatchedTensor(lvl=1, bdim=0, value=\n    tensor([[0., 1., 2.],\n"
        "            [3., 4., 5.]])\n)|torch.Size([3])|1")
    if torch is not None:
        assert printed["ember"] == printed["torch"]


# --------------------------------------------------------------------------- per-sample grads


def _mlp(lib, norm=False):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(8, 16),
                             *([lib.nn.LayerNorm(16)] if norm else []),
                             lib.nn.Tanh(), lib.nn.Linear(16, 4))


def _per_sample_loss(lib, model):
    def loss(params, x, y):
        out = lib.func.functional_call(model, params, (x.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, y.unsqueeze(0))
    return loss


def test_per_sample_gradients_match_a_loop_of_backward_passes():
    model = _mlp(ember)
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.normal(size=(10, 8)), dtype=ember.float32)
    y = ember.tensor(rng.integers(0, 4, 10))
    params = {k: v.detach() for k, v in model.named_parameters()}
    before = sum(batching.fallbacks.values())
    grads = vmap(grad(_per_sample_loss(ember, model)), in_dims=(None, 0, 0))(params, x, y)
    assert sum(batching.fallbacks.values()) == before  # every op had a batching rule
    for i in range(10):
        model.zero_grad()
        ember.nn.functional.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
        for name, p in model.named_parameters():
            np.testing.assert_allclose(grads[name][i].numpy(), p.grad.numpy(), rtol=1e-5,
                                       atol=1e-7)


def _cnn(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Conv2d(2, 4, 3, padding=1), lib.nn.ReLU(),
                             lib.nn.MaxPool2d(2), lib.nn.Conv2d(4, 4, 3, groups=2),
                             lib.nn.Flatten(), lib.nn.Linear(4, 4))


def _as_input(lib, x):
    return lib.tensor(x) if x.dtype.kind == "i" else lib.tensor(x).float()


def _bag(lib):
    """An embedding bag by hand: mean of the rows, then a linear layer."""
    lib.manual_seed(0)

    class Bag(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.out = lib.nn.Embedding(9, 5), lib.nn.Linear(5, 4)

        def forward(self, x):
            return self.out(self.emb(x).mean(1))
    return Bag()


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
@pytest.mark.parametrize("kind", ["mlp", "mlp_layernorm", "cnn", "embedding"])
def test_per_sample_gradients_match_pytorch(kind):
    rng = np.random.default_rng(1)
    xn = {"cnn": rng.normal(size=(6, 2, 6, 6)), "embedding": rng.integers(0, 9, (6, 3))}.get(
        kind, rng.normal(size=(6, 8)))
    yn = rng.integers(0, 4, 6)
    out = {}
    batching.fallbacks.clear()
    for lib in (ember, torch):
        model = {"cnn": _cnn, "embedding": _bag}.get(kind, lambda lib: _mlp(
            lib, kind == "mlp_layernorm"))(lib)
        with lib.no_grad():
            for k, p in enumerate(model.parameters()):  # the same weights in both
                p.copy_(lib.tensor(np.random.default_rng(k).normal(size=tuple(p.shape)) * 0.3))
        params = {k: v.detach() for k, v in model.named_parameters()}
        out[lib] = lib.func.vmap(lib.func.grad(_per_sample_loss(lib, model)),
                                 in_dims=(None, 0, 0))(params, _as_input(lib, xn),
                                                       lib.tensor(yn))
    assert not batching.fallbacks
    for name in out[ember]:
        np.testing.assert_allclose(out[ember][name].numpy(), out[torch][name].numpy(),
                                   rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------- built on vmap


def _pow_and_sin(lib, a, b):
    return (a ** 2 * b.sum(), (a * b).sin())


BUILT_ON_VMAP = {
    "grad_is_grads_batched": lambda L: L.autograd.grad(
        *_graph_and_batched_seeds(L), is_grads_batched=True),
    "grad_is_grads_batched_unused": lambda L: L.autograd.grad(
        *_graph_and_batched_seeds(L, extra_input=True), is_grads_batched=True,
        allow_unused=True)[:2],
    "jacobian_vectorize": lambda L: L.autograd.functional.jacobian(
        lambda a, b: _pow_and_sin(L, a, b), (L.tensor(X[0]), L.tensor(X[1])), vectorize=True),
    "jacobian_vectorize_create_graph": lambda L: L.autograd.functional.jacobian(
        lambda a: a.exp() * a.sum(), L.tensor(X[0]), create_graph=True, vectorize=True),
    "hessian_vectorize": lambda L: L.autograd.functional.hessian(
        lambda a: (a.sin() * a ** 2).sum(), L.tensor(X[1]), vectorize=True),
    "jacrev_two_outputs": lambda L: L.func.jacrev(lambda a, b: _pow_and_sin(L, a, b),
                                                  argnums=(0, 1))(L.tensor(X[0]), L.tensor(X[1])),
    "jacfwd_has_aux": lambda L: L.func.jacfwd(lambda a: (a.exp() * a.sum(), a.cos()),
                                              has_aux=True)(L.tensor(X[1])),
    "hessian_of_vector_function": lambda L: L.func.hessian(lambda a: (a[:2] * a[1:].exp()))(
        L.tensor(X[1])),
}


def _graph_and_batched_seeds(L, extra_input=False):
    a = L.tensor(X[0] + 0.5, requires_grad=True)
    b = L.tensor(X[1] * 0.3, requires_grad=True)
    out = (a * b).sin() * a.sum()
    seeds = L.tensor(np.random.default_rng(0).normal(size=(4, 3)))
    inputs = (a, b, L.tensor(1.0, requires_grad=True)) if extra_input else (a, b)
    return out, inputs, seeds


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
@pytest.mark.parametrize("name", sorted(BUILT_ON_VMAP))
def test_batched_derivatives_are_pytorchs(name):
    _same_as_pytorchs(BUILT_ON_VMAP[name])


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
def test_a_module_in_eval_mode_runs_batched_with_its_norm_layers():
    out = []
    batching.fallbacks.clear()
    for lib in (ember, torch):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Conv2d(2, 4, 3), lib.nn.BatchNorm2d(4),
                                  lib.nn.GroupNorm(2, 4), lib.nn.ReLU(),
                                  lib.nn.AdaptiveAvgPool2d(1), lib.nn.Flatten())
        with lib.no_grad():
            for k, p in enumerate(model.parameters()):
                p.copy_(lib.tensor(np.random.default_rng(k).normal(size=tuple(p.shape))))
            model[1].running_mean.copy_(lib.tensor([0.1, -0.2, 0.3, 0.0]))
            model[1].running_var.copy_(lib.tensor([1.5, 0.5, 2.0, 1.0]))
        model.eval()
        x = lib.tensor(np.random.default_rng(9).normal(size=(5, 3, 2, 6, 6))).float()
        out.append(lib.func.vmap(model)(x).detach().numpy())
    assert not batching.fallbacks
    np.testing.assert_allclose(out[0], out[1], rtol=1e-5, atol=1e-6)
