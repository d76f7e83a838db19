"""``ember.func`` (``torch.func``): grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian,
functional_call.

Each transform runs on ember and on PyTorch with the same inputs (``agree``): values, output
structures (tuples, dicts), which results keep a graph, error types and texts. Finite
differences (``gradcheck``) check that results computed from inputs that require grad are
themselves correctly differentiable.
"""
import collections

import numpy as np
import pytest

import ember

from ..oracle import agree

# PyTorch's jacrev/jacfwd go through vmap, which may warn about torch.jit.script.
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")


def point(lib, *shapes, requires_grad=False):
    """Float64 inputs with fixed values (one tensor per shape)."""
    rng = np.random.default_rng(len(shapes))
    return tuple(lib.tensor(rng.uniform(-1.0, 1.5, s), dtype=lib.float64,
                            requires_grad=requires_grad) for s in shapes)


def f_scalar(x):
    return (x.sin() * x ** 2).sum() + x.prod()


def f_vec(x):
    """R^3 -> R^2, nonlinear in every entry."""
    return (x[:2] * x[1:].exp()).sin()


def f_tree(params, x):
    """A dict of parameters and a tensor -> a dict holding a tensor and a tuple."""
    h = (x @ params["w"] + params["b"]).tanh()
    return {"h": h, "stats": (h.sum(), (h * params["b"]).exp())}


def tree_point(lib):
    w, b, x = point(lib, (3, 2), (2,), (4, 3))
    return {"w": w, "b": b}, x


# --- grad and grad_and_value --------------------------------------------------------------

@pytest.mark.parametrize("case", [
    lambda F, lib: F.grad(f_scalar)(*point(lib, (3,))),
    lambda F, lib: F.grad(lambda x, y: (x * y.exp()).sum(), argnums=1)(*point(lib, (3,), (3,))),
    lambda F, lib: F.grad(lambda x, y: (x * y.exp()).sum(), argnums=(1, 0))(
        *point(lib, (3,), (3,))),
    lambda F, lib: F.grad(lambda x, y: (x * y).sum(), argnums=-1)(*point(lib, (2,), (2,))),
    lambda F, lib: F.grad(lambda p, x: f_tree(p, x)["h"].sum())(*tree_point(lib)),
    lambda F, lib: F.grad(lambda x, scale=1.0: (x * scale).sum())(*point(lib, (2,)), scale=3.0),
    lambda F, lib: F.grad(lambda x: (x.sum(), {"aux": x * 2}), has_aux=True)(*point(lib, (3,))),
    lambda F, lib: F.grad(lambda x: x[0] * 0 + 1.0)(*point(lib, (3,))),  # constant: zeros
    lambda F, lib: F.grad(lambda x, y: x.sum(), argnums=(0, 1))(*point(lib, (2,), (2,))),
    lambda F, lib: F.grad_and_value(f_scalar)(*point(lib, (3,))),
    lambda F, lib: F.grad_and_value(lambda x: (x.exp().sum(), x.cos()), has_aux=True)(
        *point(lib, (3,))),
    lambda F, lib: F.grad_and_value(lambda xs: (xs[0] * xs[1]).sum())(list(point(lib, (2,), (2,)))),
], ids=["plain", "argnum1", "argnums_tuple", "negative_argnum", "dict_params", "kwargs",
        "has_aux", "constant", "unused_arg", "grad_and_value", "grad_and_value_aux", "list_arg"])
def test_grad(torch, case):
    agree(lambda lib: case(lib.func, lib), torch)


@pytest.mark.parametrize("case", [
    lambda F, x: F.grad(lambda t: F.grad(f_scalar)(t).sum())(x),
    lambda F, x: F.grad(F.grad(F.grad(lambda t: t.sin() * t ** 3)))(x[0]),
    lambda F, x: F.jacrev(F.jacrev(f_scalar))(x),
    lambda F, x: F.jacrev(F.jacrev(f_vec))(x),
    lambda F, x: F.hessian(f_scalar)(x),
    lambda F, x: F.hessian(f_vec)(x),
    lambda F, x: F.jacfwd(F.jacrev(f_scalar))(x),
    lambda F, x: F.jacrev(F.jacfwd(f_vec))(x),
    lambda F, x: F.jacfwd(F.jacfwd(f_vec))(x),
    lambda F, x: F.grad(lambda t: F.jvp(f_vec, (t,), (t.cos(),))[1].sum())(x),
    lambda F, x: F.jvp(F.grad(f_scalar), (x,), (x.exp(),)),
    lambda F, x: F.jvp(lambda t: F.jvp(f_vec, (t,), (t * 2,))[1], (x,), (x.cos(),)),
    # the inner function closes over the outer one's input
    lambda F, x: F.grad(lambda t: F.grad(lambda u: (t * u.sin()).sum())(x * 2).sum())(x),
    lambda F, x: F.hessian(lambda a, b: (a.exp() * b ** 2).sum(), argnums=(0, 1))(x, x * 3),
], ids=["grad_grad", "grad_grad_grad", "jacrev_jacrev", "jacrev_jacrev_vector", "hessian",
        "hessian_vector", "jacfwd_jacrev", "jacrev_jacfwd", "jacfwd_jacfwd", "grad_of_jvp",
        "jvp_of_grad", "jvp_of_jvp", "closure", "hessian_argnums"])
def test_nested_transforms(torch, case):
    agree(lambda lib: case(lib.func, point(lib, (3,))[0]), torch)


def test_nested_results_match_finite_differences():
    """Third derivatives: the Hessian of a function is itself differentiated."""
    F = ember.func
    x, = point(ember, (3,), requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: F.hessian(f_scalar)(t), (x,))
    assert ember.autograd.gradcheck(lambda t: F.jacfwd(F.jacfwd(f_vec))(t), (x,))
    assert ember.autograd.gradgradcheck(lambda t: F.grad(f_scalar)(t), (x,))


# --- Which results keep a graph ---------------------------------------------------------

def graph_flags(tree):
    """``(requires_grad, has grad_fn)`` of every tensor in a (nested) result."""
    if isinstance(tree, (tuple, list)):
        return [graph_flags(t) for t in tree]
    if isinstance(tree, dict):
        return {k: graph_flags(v) for k, v in tree.items()}
    return tree.requires_grad, tree.grad_fn is not None


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("case", [
    lambda F, x, y: F.grad_and_value(lambda a, b: (a * b).sum())(x, y),
    lambda F, x, y: F.grad(lambda a, b: (a * a).sum(), argnums=(0, 1))(x, y),
    lambda F, x, y: F.grad(lambda a: (a * y).sum())(x.detach()),   # closes over y
    lambda F, x, y: F.vjp(lambda a: a.sin(), x)[1](y.detach()),
    lambda F, x, y: F.vjp(lambda a: a.sin(), x.detach())[1](y),     # cotangent needs grad
    lambda F, x, y: F.vjp(lambda a: a, x),
    lambda F, x, y: F.jvp(lambda a: a.exp(), (x,), (y.detach(),)),
    lambda F, x, y: F.jacrev(lambda a: a.sin() * a)(x),
    lambda F, x, y: F.hessian(f_scalar)(x),
], ids=["grad_and_value", "unrelated_arg", "closure", "vjp", "vjp_cotangent", "vjp_identity",
        "jvp", "jacrev", "hessian"])
def test_results_keep_only_the_callers_graph(torch, case, requires_grad):
    """Results have a grad_fn only where they depend on something the caller differentiates,
    as PyTorch's unwrapping leaves them; and never under no_grad."""
    def run(lib):
        x, y = point(lib, (3,), (3,), requires_grad=requires_grad)
        result = case(lib.func, x, y)
        result = [r for r in result if not callable(r)] if isinstance(result, tuple) else result
        with lib.no_grad():
            quiet = case(lib.func, x, y)
        quiet = [r for r in quiet if not callable(r)] if isinstance(quiet, tuple) else quiet
        return graph_flags(result), graph_flags(quiet)
    agree(run, torch)


def test_results_connected_to_the_caller_backpropagate(torch):
    def run(lib):
        x, = point(lib, (3,), requires_grad=True)
        lib.func.grad(f_scalar)(x).pow(2).sum().backward()
        first = x.grad
        x.grad = None
        lib.func.jacrev(f_vec)(x).sum().backward()
        return first, x.grad
    agree(run, torch)


def test_an_error_inside_leaves_no_transform_running(torch):
    def run(lib):
        x, = point(lib, (3,))
        with pytest.raises(ZeroDivisionError):
            lib.func.grad(lambda t: 1 / 0)(x)
        return graph_flags(lib.func.grad(f_scalar)(x))
    agree(run, torch)


def test_inner_no_grad_is_respected(torch):
    def run(lib):
        def f(x):
            with lib.no_grad():
                c = x ** 2
            return (x - c).sum()
        x, = point(lib, (3,))
        return lib.func.grad(f)(x)
    agree(run, torch)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_inputs_modified_in_place_are_refused(torch, requires_grad):
    def run(lib):
        x, = point(lib, (3,), requires_grad=requires_grad)
        return lib.func.grad(lambda t: t.mul_(2).sum())(x * 1)
    agree(run, torch, raises=RuntimeError)


def test_in_place_under_no_grad_is_allowed(torch):
    def run(lib):
        def f(t):
            with lib.no_grad():
                t.mul_(2)
            return (t ** 2).sum()
        x, = point(lib, (3,), requires_grad=True)
        y = x * 1
        return lib.func.grad(f)(y), y
    agree(run, torch)


def test_an_input_returned_as_it_is_is_the_callers_tensor(torch):
    def run(lib):
        x, = point(lib, (3,), requires_grad=True)
        _, aux = lib.func.grad(lambda t: ((t * t).sum(), t), has_aux=True)(x)
        out, _ = lib.func.vjp(lambda t: t, x)
        return aux is x, out is x
    assert agree(run, torch) == (True, True)


# --- vjp and jvp -------------------------------------------------------------------------

def test_vjp(torch):
    def run(lib):
        F = lib.func
        x, y = point(lib, (2, 3), (3, 2))
        out, vjp_fn = F.vjp(lambda a, b: (a @ b).tanh(), x, y)
        out2, vjp_fn2, aux = F.vjp(lambda p, t: (f_tree(p, t), t.sum()), *tree_point(lib),
                                   has_aux=True)
        cot = {"h": out2["h"].cos(), "stats": (out2["stats"][0] * 0 + 2, out2["stats"][1])}
        single, single_fn = F.vjp(f_vec, x[0])
        return (out, vjp_fn(out.exp()), vjp_fn(out * 2), out2, vjp_fn2(cot), aux,
                single_fn(single.sin()))
    agree(run, torch)


def test_jvp(torch):
    def run(lib):
        F = lib.func
        x, y = point(lib, (2, 3), (3, 2))
        p, t = tree_point(lib)
        tangent_p = {"w": p["w"].cos(), "b": p["b"] * 3}
        return (F.jvp(lambda a, b: (a @ b).tanh(), (x, y), (x.cos(), y * 2)),
                F.jvp(f_tree, (p, t), (tangent_p, t.exp())),
                F.jvp(lambda a: (a.sin(), a.sum()), (x,), (y.T,), has_aux=True),
                F.jvp(lambda a: (a.exp(), a.detach() * 2), (x,), (x,)))  # independent: zeros
    agree(run, torch)


# --- jacrev, jacfwd, hessian -------------------------------------------------------------

@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("case", [
    lambda J, x, y: J(f_vec)(x),
    lambda J, x, y: J(lambda a, b: (a * b.exp(), (a + b).sum()), argnums=(0, 1))(x, y),
    lambda J, x, y: J(lambda a, b: {"p": a.outer(b), "s": b.sum()}, argnums=1)(x, y),
    lambda J, x, y: J(lambda a: (a.exp(), a.sum()), has_aux=True)(x),
    lambda J, x, y: J(lambda p: f_tree(p, x.reshape(1, 3).expand(4, 3)))({"w": y.outer(x)[:, :2],
                                                                          "b": x[:2]}),
    lambda J, x, y: J(lambda a: a.sum())(x),
    lambda J, x, y: J(lambda s: s * x)(y[0]),
], ids=["vector", "argnums_tuple", "dict_output", "has_aux", "dict_input", "scalar_output",
        "scalar_input"])
def test_jacobians(torch, jac, case):
    agree(lambda lib: case(getattr(lib.func, jac), *point(lib, (3,), (3,))), torch)


@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
def test_empty_jacobians(torch, jac):
    def run(lib):
        J = getattr(lib.func, jac)
        x, = point(lib, (3,))
        return J(lambda t: t[:0] * 2)(x), J(lambda t: t.sum())(x[:0])
    agree(run, torch)


def test_jacfwd_argnums_none_takes_every_argument(torch):
    agree(lambda lib: lib.func.jacfwd(lambda a, b: a * b, argnums=None)(*point(lib, (2,), (2,))),
          torch)


def test_jacobians_match_finite_differences():
    x, = point(ember, (3,))
    J = ember.func.jacrev(f_vec)(x)
    eps = 1e-6
    for k in range(3):
        e = ember.zeros(3, dtype=ember.float64)
        e[k] = eps
        column = (f_vec(x + e) - f_vec(x - e)) / (2 * eps)
        np.testing.assert_allclose(J[:, k].numpy(), column.numpy(), rtol=1e-6)
    np.testing.assert_allclose(ember.func.jacfwd(f_vec)(x).numpy(), J.numpy(), rtol=1e-12)


# --- errors ---------------------------------------------------------------------------------

def _int(lib, x):
    return x.to(lib.int64)


@pytest.mark.parametrize("call, raises", [
    (lambda F, lib, x: F.grad(lambda t: t)(x), RuntimeError),                   # not scalar
    (lambda F, lib, x: F.grad(lambda t: 3)(x), RuntimeError),                   # not a tensor
    (lambda F, lib, x: F.grad(lambda t: t.sum(), has_aux=True)(x), RuntimeError),
    (lambda F, lib, x: F.grad(lambda t: (t.sum(), 3), has_aux=True)(x), RuntimeError),
    (lambda F, lib, x: F.grad(lambda t: t.sum(), argnums=1)(x), RuntimeError),
    (lambda F, lib, x: F.grad(lambda t: t.sum(), argnums=-2)(x), RuntimeError),
    (lambda F, lib, x: F.grad(lambda t: t.sum(), argnums=(0, -1))(x), RuntimeError),
    (lambda F, lib, x: F.grad(lambda t: t.sum(), argnums=())(x), RuntimeError),
    (lambda F, lib, x: F.grad(lambda t: t.sum(), argnums=[0])(x), RuntimeError),
    (lambda F, lib, x: F.grad(lambda t: t.sum(), argnums=(0.5,))(x), RuntimeError),
    (lambda F, lib, x: F.grad(lambda t: t.sum())(3.0), ValueError),
    (lambda F, lib, x: F.grad(lambda t: t.sum())(_int(lib, x)), RuntimeError),
    (lambda F, lib, x: F.vjp(lambda t: 3, x), RuntimeError),
    (lambda F, lib, x: F.vjp(lambda t: None, x), RuntimeError),
    (lambda F, lib, x: F.vjp(lambda t: (t, 3), x), RuntimeError),
    (lambda F, lib, x: F.vjp(lambda t: _int(lib, t), x), RuntimeError),
    (lambda F, lib, x: F.vjp(lambda t: t, 3), ValueError),
    (lambda F, lib, x: F.vjp(lambda t: t.sum(), x, has_aux=True), RuntimeError),
    (lambda F, lib, x: F.vjp(lambda t: (t, {"a": None}), x, has_aux=True), RuntimeError),
    (lambda F, lib, x: F.vjp(lambda t: (t, {"a": t}), x)[1]((x, [x])), RuntimeError),
    (lambda F, lib, x: F.vjp(lambda t: t, x)[1](x[:2]), RuntimeError),
    (lambda F, lib, x: F.jvp(lambda t: t, [x], [x]), RuntimeError),
    (lambda F, lib, x: F.jvp(lambda t, u: t, (x, {"a": x}), (x, x)), RuntimeError),
    (lambda F, lib, x: F.jvp(lambda t: t, (), ()), RuntimeError),
    (lambda F, lib, x: F.jvp(lambda t: t, (3,), (3,)), RuntimeError),
    (lambda F, lib, x: F.jvp(lambda t: t, (x,), (x[:2],)), RuntimeError),
    (lambda F, lib, x: F.jvp(lambda t: t, (x,), (_int(lib, x),)), ValueError),
    (lambda F, lib, x: F.jvp(lambda t: 3, (x,), (x,)), RuntimeError),
    (lambda F, lib, x: F.jvp(lambda t: t.detach() * 2, (x,), (x,), strict=True), RuntimeError),
    (lambda F, lib, x: F.jvp(lambda t: t, (x,), (x,), has_aux=True), RuntimeError),
    (lambda F, lib, x: F.jvp(lambda t: (t, 3), (x,), (x,), has_aux=True), RuntimeError),
    (lambda F, lib, x: F.jacrev(lambda t: t, chunk_size=0), ValueError),
    (lambda F, lib, x: F.jacrev(lambda t: t, argnums=None)(x), RuntimeError),
    (lambda F, lib, x: F.jacrev(lambda t: t)(x.to(lib.complex128)), RuntimeError),
    (lambda F, lib, x: F.jacrev(lambda t: t.to(lib.complex128))(x), RuntimeError),
    (lambda F, lib, x: F.jacfwd(lambda t: t.to(lib.complex128))(x), RuntimeError),
    (lambda F, lib, x: F.jacfwd(lambda t: t, randomness="sometimes")(x), RuntimeError),
    (lambda F, lib, x: F.jacrev(lambda t: 3)(x), RuntimeError),
    (lambda F, lib, x: F.jacfwd(lambda t: 3)(x), RuntimeError),
], ids=["grad_vector", "grad_int", "grad_aux_missing", "grad_aux_int", "argnum_range",
        "argnum_negative", "argnums_repeat", "argnums_empty", "argnums_list", "argnum_float",
        "grad_float_arg", "grad_int_tensor", "vjp_int", "vjp_none", "vjp_tuple_int",
        "vjp_int_tensor", "vjp_int_primal", "vjp_aux_missing", "vjp_aux_none",
        "vjp_cotangent_structure", "vjp_cotangent_shape", "jvp_list", "jvp_structure",
        "jvp_empty", "jvp_int_primal", "jvp_tangent_shape", "jvp_int_tangent", "jvp_int_output",
        "jvp_strict", "jvp_aux_missing", "jvp_aux_int", "chunk_size", "jacrev_argnums_none",
        "jacrev_complex_in", "jacrev_complex_out", "jacfwd_complex_out", "randomness",
        "jacrev_int", "jacfwd_int"])
def test_errors(torch, call, raises):
    agree(lambda lib: call(lib.func, lib, point(lib, (3,))[0]), torch, raises=raises)


def test_tree_specs_print_as_pytorchs(torch):
    """Specs are part of PyTorch's error texts."""
    from torch.utils import _pytree as theirs

    from ember.utils import _pytree as ours
    pair = collections.namedtuple("pair", "a b")
    for tree in [(1, {"b": 2, "a": [3, None]}), pair(1, (2,)), collections.OrderedDict(z=1),
                 5, [], {}]:
        leaves, spec = ours.tree_flatten(tree)
        want_leaves, want_spec = theirs.tree_flatten(tree)
        assert leaves == want_leaves and repr(spec) == repr(want_spec)
        assert ours.treespec_pprint(spec) == theirs.treespec_pprint(want_spec)
        assert ours.tree_unflatten(leaves, spec) == tree


# --- functional_call -------------------------------------------------------------------------

def fixed(lib, shape, start=-1.0):
    """A float64 tensor with the same fixed values on both libraries."""
    size = int(np.prod(shape))
    return lib.tensor(np.linspace(start, 1.0, size).reshape(shape), dtype=lib.float64)


def with_fixed_parameters(lib, model):
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(fixed(lib, tuple(p.shape), start=-0.5 + 0.1 * i))
    return model


def mlp(lib):
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2)).double()
    return with_fixed_parameters(lib, model)


def same_parameters(lib, model):
    """Other parameters for ``model``, the same on both libraries."""
    return {name: fixed(lib, tuple(p.shape)) for name, p in model.named_parameters()}


def test_functional_call_uses_the_given_tensors_and_restores(torch):
    def run(lib):
        model = mlp(lib)
        params = same_parameters(lib, model)
        before = {k: v for k, v in model.named_parameters()}
        x, = point(lib, (5, 3))
        out = lib.func.functional_call(model, params, (x,))
        partial = lib.func.functional_call(model, {"2.bias": params["2.bias"]}, x)
        split = lib.func.functional_call(model, ({"0.weight": params["0.weight"]},
                                                 {"0.bias": params["0.bias"]}), args=(x,))
        restored = all(p is before[k] for k, p in model.named_parameters())
        return out, partial - model(x), split - model(x), restored
    assert agree(run, torch)[-1] is True


def test_functional_call_restores_after_an_error(torch):
    def run(lib):
        model = mlp(lib)
        before = list(model.parameters())
        with pytest.raises(RuntimeError):
            lib.func.functional_call(model, same_parameters(lib, model), (lib.ones(5, 7),))
        return all(a is b for a, b in zip(model.parameters(), before))
    assert agree(run, torch) is True


def test_functional_call_kwargs_and_buffers(torch):
    def run(lib):
        bn = lib.nn.BatchNorm1d(3).double()
        x, = point(lib, (6, 3))
        state = {"running_mean": lib.zeros(3, dtype=lib.float64),
                 "running_var": lib.ones(3, dtype=lib.float64),
                 "num_batches_tracked": lib.tensor(0)}
        out = lib.func.functional_call(bn, state, (), {"input": x})
        return out, state, bn.running_mean  # the given buffers were updated, not the module's
    agree(run, torch)


def tied(lib):
    """A model whose two layers share one weight (two names, one parameter)."""
    model = lib.nn.Sequential(lib.nn.Linear(2, 2, bias=False),
                              lib.nn.Linear(2, 2, bias=False)).double()
    model[1].weight = model[0].weight
    return with_fixed_parameters(lib, model)


@pytest.mark.parametrize("tie_weights", [True, False])
def test_functional_call_tied_weights(torch, tie_weights):
    def run(lib):
        model = tied(lib)
        w = fixed(lib, (2, 2))
        return lib.func.functional_call(model, {"0.weight": w}, lib.ones(1, 2, dtype=lib.float64),
                                        tie_weights=tie_weights)
    agree(run, torch)


@pytest.mark.parametrize("call, raises", [
    (lambda lib, m, x: lib.func.functional_call(m, {"0.weight": x, "1.weight": x * 2}, x),
     ValueError),
    (lambda lib, m, x: lib.func.functional_call(m, {"0.weight": x}, x, strict=True),
     RuntimeError),
    (lambda lib, m, x: lib.func.functional_call(m, {"0.weight": x, "0.bias": x, "1.weight": x,
                                                    "extra": x}, x, strict=True), RuntimeError),
    (lambda lib, m, x: lib.func.functional_call(m, ({"a": x}, {"a": x}), x), ValueError),
    (lambda lib, m, x: lib.func.functional_call(m, [{"a": x}, 3], x), ValueError),
    (lambda lib, m, x: lib.func.functional_call(m, 3, x), ValueError),
    (lambda lib, m, x: lib.func.functional_call(m, {"5.weight": x}, x), AttributeError),
    (lambda lib, m, x: lib.func.functional_call(m, {"0.weight.x": x}, x), TypeError),
    (lambda lib, m, x: lib.func.functional_call(m, {"0.weight": 3}, x), TypeError),
    (lambda lib, m, x: lib.func.functional_call(m, {"training": x}, x), TypeError),
], ids=["tied_values_differ", "missing_key", "unexpected_key", "repeated_key", "not_dicts",
        "not_a_dict", "no_submodule", "not_a_module", "not_a_tensor", "not_a_tensor_attr"])
def test_functional_call_errors(torch, call, raises):
    def run(lib):
        model = tied(lib)
        model[0].bias = lib.nn.Parameter(lib.zeros(2, dtype=lib.float64))
        return call(lib, model, lib.ones(2, 2, dtype=lib.float64))
    agree(run, torch, raises=raises)


def test_per_sample_gradients(torch):
    """grad with respect to a dict of parameters, one sample at a time (PyTorch would vmap)."""
    def run(lib):
        model = mlp(lib)
        params = {k: v.detach() for k, v in model.named_parameters()}
        xs, ts = point(lib, (4, 3), (4, 2))

        def loss(p, x, t):
            return lib.nn.functional.mse_loss(lib.func.functional_call(model, p, (x,)), t)

        per_sample = [lib.func.grad(loss)(params, x[None], t[None]) for x, t in zip(xs, ts)]
        with_model_params = lib.func.grad(loss)(dict(model.named_parameters()), xs, ts)
        return per_sample, with_model_params, graph_flags(with_model_params)
    agree(run, torch)
