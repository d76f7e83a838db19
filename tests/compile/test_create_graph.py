"""Compiled mode records a backward that records its graph (``create_graph=True``,
``ember/_dynamo/graph_backward.py``): a Hessian-vector product, a gradient penalty, a second
backward through the gradients, all inside one compiled call, replay eager's results bit for
bit. A graph that outlives the call is not replayed (the call runs eagerly, as correct).

Each test builds the same step twice from one seed, runs one eagerly and one compiled on the
same inputs for several calls, and compares every result and every ``.grad`` byte for byte
after each call."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from tests.compile.common import array_bytes, same


def _same_tensors(want, got):
    """Parameters (or any tensors that outlive the call) and their ``.grad``, alike."""
    for p, q in zip(want, got):
        assert array_bytes(p) == array_bytes(q)
        assert (p.grad is None) == (q.grad is None)
        if p.grad is not None:
            assert array_bytes(p.grad) == array_bytes(q.grad)
            assert p.grad.requires_grad == q.grad.requires_grad


def _run_twins(build, inputs, steps=5):
    """``build()`` -> ``(step, tensors)``; step one eagerly and one compiled on
    ``inputs(i)``, comparing results and ``tensors`` (with their ``.grad``) after each
    call; returns the compiled function. (The random generator is seeded alike before
    each call: a replay draws from it as eager does.)"""
    eager_step, eager_tensors = build()
    plain_step, tensors = build()
    compiled = ember.compile(plain_step)
    for i in range(steps):
        args = inputs(i)
        ember.manual_seed(1000 + i)
        want = eager_step(*args)
        ember.manual_seed(1000 + i)
        got = compiled(*[a.clone() if isinstance(a, ember.Tensor) else a for a in args])
        same(want, got)
        _same_tensors(eager_tensors, tensors)
    return compiled


def _replayed(compiled):
    runner = compiled._ember_runner
    assert runner.replays >= 1, runner.reasons
    assert all(e is not None for e in runner.entries.values()), runner.reasons


def _not_replayed(compiled, reason):
    runner = compiled._ember_runner
    assert runner.replays == 0
    assert any(reason in r for r in runner.reasons.values()), runner.reasons


def _normal(*shapes, seed=0, dtype=ember.float64):
    rng = np.random.default_rng(seed)
    return lambda i: tuple(ember.tensor(rng.standard_normal(s), dtype=dtype) for s in shapes)


def _mlp(dtype=ember.float64):
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Softplus(),
                         nn.Linear(8, 3)).to(dtype)


# ---------------------------------------------------------------- Hessian-vector products
def _hvp_build(seed=0, dtype=ember.float64):
    """An HVP of an MLP's MSE loss: ``grad(loss, params, create_graph=True)``, then the
    gradient of ``sum(g * v)``; ``v`` is given, one tensor per parameter."""
    def build():
        ember.manual_seed(seed)
        model = _mlp(dtype)
        params = list(model.parameters())

        def step(x, y, *v):
            loss = F.mse_loss(model(x), y)
            grads = ember.autograd.grad(loss, params, create_graph=True)
            dot = sum((g * u).sum() for g, u in zip(grads, v))
            hv = ember.autograd.grad(dot, params)
            return loss.detach(), [g.detach() for g in grads], list(hv)
        return step, params
    return build


def _hvp_inputs(seed=1, dtype=ember.float64):
    shapes = [(6, 4), (6, 3), (8, 4), (8,), (8, 8), (8,), (3, 8), (3,)]
    return _normal(*shapes, seed=seed, dtype=dtype)


@pytest.mark.parametrize("dtype", [ember.float64, ember.float32], ids=["float64", "float32"])
def test_hvp_through_a_nonlinear_mlp_replays(dtype):
    _replayed(_run_twins(_hvp_build(dtype=dtype), _hvp_inputs(dtype=dtype)))


def test_hvp_with_grad_outputs_replays():
    def build():
        ember.manual_seed(2)
        model = _mlp()
        params = list(model.parameters())

        def step(x, y, *v):
            loss = F.mse_loss(model(x), y)
            grads = ember.autograd.grad(loss, params, create_graph=True)
            return ember.autograd.grad(grads, params, grad_outputs=v)
        return step, params
    _replayed(_run_twins(build, _hvp_inputs(seed=3)))


def test_hvp_replay_matches_finite_differences():
    """The values: a replayed HVP against central differences of the gradient."""
    step, params = _hvp_build(seed=4)()
    compiled = ember.compile(step)
    x, y, *v = _hvp_inputs(seed=5)(0)
    for _ in range(3):
        _, _, hv = compiled(x, y, *v)
    _replayed(compiled)
    eps = 1e-6

    def grads_at(sign):
        with ember.no_grad():
            for p, u in zip(params, v):
                p += sign * eps * u
        loss = F.mse_loss(_forward(params, x), y)
        got = ember.autograd.grad(loss, params)
        with ember.no_grad():
            for p, u in zip(params, v):
                p -= sign * eps * u
        return got
    plus, minus = grads_at(1.0), grads_at(-1.0)
    for h, a, b in zip(hv, plus, minus):
        np.testing.assert_allclose(h.numpy(), (a - b).numpy() / (2 * eps), rtol=1e-5,
                                   atol=1e-7)


def _forward(params, x):
    w1, b1, w2, b2, w3, b3 = params
    return F.linear(F.softplus(F.linear(ember.tanh(F.linear(x, w1, b1)), w2, b2)), w3, b3)


def test_hvp_replay_matches_pytorch():
    torch = pytest.importorskip("torch")
    step, params = _hvp_build(seed=6)()
    compiled = ember.compile(step)
    x, y, *v = _hvp_inputs(seed=7)(0)
    for _ in range(3):
        _, grads, hv = compiled(x, y, *v)
    _replayed(compiled)
    tp = [torch.tensor(p.detach().numpy(), requires_grad=True) for p in params]
    tx, ty = torch.tensor(x.numpy()), torch.tensor(y.numpy())
    tv = [torch.tensor(u.numpy()) for u in v]
    w1, b1, w2, b2, w3, b3 = tp
    h = torch.nn.functional.linear(torch.tanh(torch.nn.functional.linear(tx, w1, b1)), w2, b2)
    out = torch.nn.functional.linear(torch.nn.functional.softplus(h), w3, b3)
    tg = torch.autograd.grad(torch.nn.functional.mse_loss(out, ty), tp, create_graph=True)
    thv = torch.autograd.grad(sum((g * u).sum() for g, u in zip(tg, tv)), tp)
    for a, b in zip(grads, tg):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    for a, b in zip(hv, thv):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- backward(create_graph=True)
def test_backward_create_graph_then_a_backward_through_the_grads_replays():
    """``.grad`` holds the graph between the two backwards; the second accumulates
    ``g + Hv`` into it (detached), as eager does."""
    def build():
        ember.manual_seed(8)
        model = _mlp()
        params = list(model.parameters())

        def step(x, y, *v):
            for p in params:
                p.grad = None
            loss = F.mse_loss(model(x), y)
            loss.backward(create_graph=True)
            sum((p.grad * u).sum() for p, u in zip(params, v)).backward()
            return loss.detach()
        return step, params
    _replayed(_run_twins(build, _hvp_inputs(seed=9)))


def test_gradients_accumulated_over_calls_under_create_graph_replay():
    """``.grad`` is not cleared between calls: ``AccumulateGrad`` sums under create_graph
    (``.grad + g``, an op), then the second backward sums again."""
    def build():
        ember.manual_seed(10)
        model = _mlp()
        params = list(model.parameters())

        def step(x, y):
            loss = F.mse_loss(model(x), y)
            loss.backward(create_graph=True)
            sum((p.grad ** 2).sum() for p in params).backward()
            return loss.detach()
        return step, params
    _replayed(_run_twins(build, _normal((5, 4), (5, 3), seed=11)))


def test_a_second_order_step_with_an_optimizer_uses_the_new_weights_each_call():
    """The weights change between calls (the optimizer's step inside the call, and the
    inputs differ): each replay reads the values of its time."""
    def build():
        ember.manual_seed(12)
        model = _mlp()
        opt = ember.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        params = list(model.parameters())

        def step(x, y):
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            grads = ember.autograd.grad(loss, params, create_graph=True)
            penalty = sum((g ** 2).sum() for g in grads)
            (loss + 0.1 * penalty).backward()
            opt.step()
            return loss.detach(), penalty.detach()
        return step, params
    _replayed(_run_twins(build, _normal((5, 4), (5, 3), seed=13), steps=6))


def test_an_input_written_in_place_between_calls_is_read_anew():
    def build():
        ember.manual_seed(14)
        w = ember.randn(3, 3, dtype=ember.float64, requires_grad=True)

        def step(x):
            y = (ember.sin(x @ w) ** 2).sum()
            (g,) = ember.autograd.grad(y, w, create_graph=True)
            (g * x.sum()).sum().backward()
            return g.detach()
        return step, [w]
    eager_step, (w_eager,) = build()
    step, (w,) = build()
    compiled = ember.compile(step)
    x = ember.randn(4, 3, dtype=ember.float64)
    for _ in range(4):
        with ember.no_grad():
            x.mul_(1.5).add_(0.25)
        same(eager_step(x), compiled(x))
        _same_tensors([w_eager], [w])
    _replayed(compiled)


def test_gradient_penalty_wgan_gp_style_replays():
    """A critic's loss with a gradient penalty on interpolated inputs (WGAN-GP):
    ``((grad.norm(2, dim=1) - 1) ** 2).mean()`` added to the loss and backpropagated."""
    def build():
        ember.manual_seed(15)
        critic = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 1)).double()
        opt = ember.optim.Adam(critic.parameters(), lr=1e-3)

        def step(real, fake, alpha):
            opt.zero_grad()
            mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
            (grad,) = ember.autograd.grad(critic(mixed).sum(), mixed, create_graph=True)
            penalty = ((grad.norm(2, dim=1) - 1) ** 2).mean()
            loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
            loss.backward()
            opt.step()
            return loss.detach(), penalty.detach()
        return step, list(critic.parameters())
    _replayed(_run_twins(build, _normal((7, 5), (7, 5), (7, 1), seed=16), steps=6))


def test_double_backward_to_an_argument_replays():
    """The gradient of a gradient norm with respect to the input it was taken for."""
    def build():
        ember.manual_seed(17)
        model = _mlp()

        def step(x):
            x = x.detach().requires_grad_(True)
            out = model(x)
            (gx,) = ember.autograd.grad(out.pow(2).sum(), x, create_graph=True)
            gx.pow(2).sum().backward()
            return x.grad, gx.detach()
        return step, list(model.parameters())
    _replayed(_run_twins(build, _normal((6, 4), seed=18)))


def test_third_order_replays():
    def build():
        w = ember.tensor([0.3, -1.2, 0.7], dtype=ember.float64, requires_grad=True)

        def step(x):
            y = (ember.tanh(w * x) ** 3).sum()
            (g1,) = ember.autograd.grad(y, w, create_graph=True)
            (g2,) = ember.autograd.grad(g1.sum(), w, create_graph=True)
            (g3,) = ember.autograd.grad(g2.sum(), w)
            return g1.detach(), g2.detach(), g3
        return step, [w]
    _replayed(_run_twins(build, _normal((3,), seed=19)))


# ---------------------------------------------------------------- graphs that outlive the call
def test_a_gradient_with_its_graph_returned_is_not_replayed():
    """The caller backpropagates through the returned gradient: a replay makes no graph,
    so the call runs eagerly, and the caller's backward gives eager's gradients."""
    def build():
        ember.manual_seed(20)
        model = _mlp()
        params = list(model.parameters())

        def step(x, y):
            loss = F.mse_loss(model(x), y)
            return ember.autograd.grad(loss, params, create_graph=True)
        return step, params
    eager_step, eager_params = build()
    step, params = build()
    compiled = ember.compile(step)
    inputs = _normal((5, 4), (5, 3), seed=21)
    for i in range(4):
        x, y = inputs(i)
        want, got = eager_step(x, y), compiled(x, y)
        same(want, got)
        sum((g ** 2).sum() for g in want).backward()
        sum((g ** 2).sum() for g in got).backward()
        _same_tensors(eager_params, params)
    _not_replayed(compiled, "create_graph")


def test_a_grad_holding_its_graph_after_the_call_is_not_replayed():
    def build():
        ember.manual_seed(22)
        model = _mlp()
        params = list(model.parameters())

        def step(x, y):
            for p in params:
                p.grad = None
            loss = F.mse_loss(model(x), y)
            loss.backward(create_graph=True)
            return loss.detach()
        return step, params
    compiled = _run_twins(build, _normal((5, 4), (5, 3), seed=23), steps=4)
    _not_replayed(compiled, "a .grad holds a graph")


def test_a_result_whose_graph_create_graph_kept_raises_if_backpropagated():
    """The loss is returned: its values replay, and a backward through it afterwards
    raises a clear error instead of computing without the graph eager kept."""
    def build():
        ember.manual_seed(24)
        model = _mlp()
        params = list(model.parameters())

        def step(x, y):
            loss = F.mse_loss(model(x), y)
            grads = ember.autograd.grad(loss, params, create_graph=True)
            sum((g ** 2).sum() for g in grads).backward()
            return loss
        return step, params
    compiled = _run_twins(build, _normal((5, 4), (5, 3), seed=25), steps=4)
    _replayed(compiled)
    runner = compiled._ember_runner
    replays = runner.replays
    x, y = _normal((5, 4), (5, 3), seed=26)(0)
    loss = compiled(x, y)
    assert runner.replays == replays + 1 and loss.requires_grad
    with pytest.raises(RuntimeError, match="create_graph=True inside the compiled call"):
        loss.backward()


def test_a_custom_function_under_create_graph_is_not_replayed():
    class Cube(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * g

    def build():
        w = ember.tensor([0.5, -2.0], dtype=ember.float64, requires_grad=True)

        def step(x):
            (g,) = ember.autograd.grad(Cube.apply(w * x).sum(), w, create_graph=True)
            g.sum().backward()
            return g.detach()
        return step, [w]
    compiled = _run_twins(build, _normal((2,), seed=27), steps=4)
    _not_replayed(compiled, "custom")


@pytest.mark.parametrize("create_graph", [False, True], ids=["plain", "create_graph"])
def test_backward_with_inputs_writes_grad_in_the_replay(create_graph):
    """``backward(inputs=...)`` accumulates outside the engine's walk: the replay sets
    ``.grad`` too (it once kept the recording's)."""
    def build():
        ember.manual_seed(28)
        model = _mlp()
        params = list(model.parameters())

        def step(x, y):
            for p in params:
                p.grad = None
            loss = F.mse_loss(model(x), y)
            loss.backward(inputs=params[:2], create_graph=create_graph)
            if create_graph:
                sum((p.grad ** 2).sum() for p in params[:2]).backward(inputs=params)
        return step, params
    _replayed(_run_twins(build, _normal((5, 4), (5, 3), seed=29)))


@pytest.mark.parametrize("kwargs", [{}, {"ignore_index": 1}, {"reduction": "sum"},
                                    {"label_smoothing": 0.1}],
                         ids=["mean", "ignore_index", "sum", "smoothing"])
def test_hvp_of_a_cross_entropy_replays(kwargs):
    """The NLL rule's raw arrays made from the targets (which entries, their weights) are
    one recorded call under create_graph."""
    rng = np.random.default_rng(30)

    def inputs(i):
        return (ember.tensor(rng.standard_normal((9, 4))), ember.tensor(rng.integers(0, 3, 9)),
                *(ember.tensor(rng.standard_normal(s)) for s in [(8, 4), (8,), (8, 8), (8,),
                                                                  (3, 8), (3,)]))

    def build():
        ember.manual_seed(31)
        model = _mlp()
        params = list(model.parameters())
        options = dict(kwargs)

        def step(x, y, *v):
            loss = F.cross_entropy(model(x), y, **options)
            grads = ember.autograd.grad(loss, params, create_graph=True)
            hv = ember.autograd.grad(sum((g * u).sum() for g, u in zip(grads, v)), params)
            return loss.detach(), hv
        return step, params
    _replayed(_run_twins(build, inputs))


def test_nan_gradients_keep_their_sign_bits_in_the_replay():
    """A fuzzed HVP through ``sqrt`` of a negative number: NaN everywhere, whose sign bits
    the replay keeps too. (NumPy's ``a += b`` on one element gives ``b``'s NaN where
    ``a + b`` gives ``a``'s: one-element sums are not replayed in place.)"""
    def build():
        def step(a):
            t = ember.logcumsumexp(ember.sqrt(a).select(-2, 0), 0)
            picked = t[ember.tensor([0, -1, -1, -1])]
            (g,) = ember.autograd.grad(picked, a, ember.tensor([2.75, -2.75, -0.75, 0.5]),
                                       create_graph=True)
            (h,) = ember.autograd.grad(g, a, ember.tensor([[-1.0]]))
            return g.detach(), h
        return step, []

    def inputs(i):
        return (ember.tensor([[-2.25 + 0.125 * i]], requires_grad=True),)
    _replayed(_run_twins(build, inputs))

    def plain(x, y):
        return x * 2 + y
    compiled = ember.compile(plain)
    x, y = ember.tensor([float("nan")]), -ember.tensor([float("nan")])
    for _ in range(3):
        same(plain(x, y), compiled(x, y))
    _replayed(compiled)


@pytest.mark.slow
def test_fuzzed_programs_with_a_double_backward_replay_detached():
    """The fuzzer's programs that take ``autograd.grad(create_graph=True)`` then an HVP
    (seeds 0-299), their names returned detached (so that a replay may serve them): every
    name and ``.grad`` equals eager's byte for byte on three calls of new leaf values, and
    about half replay (the others break for reasons of their own: ``.item()``, hooks, ...)."""
    pytest.importorskip("torch")
    from tests.fuzz.generator import generate
    from tests.fuzz.test_fuzz_compile import _fresh, _function
    from tests.fuzz.test_fuzz_compile import _same as _same_nan

    seen = replayed = 0
    for seed in range(300):
        program = generate(seed)
        if not any("create_graph=True" in s.code for s in program.stmts):
            continue
        seen += 1
        fn, leaves = _function(program, _detached)
        compiled = ember.compile(fn)
        for k in range(3):
            eager_leaves, compiled_leaves = _fresh(leaves, k), _fresh(leaves, k)
            try:
                want = fn(*eager_leaves)
            except Exception as exc:  # (the fuzzer keeps some errors: the same one)
                with pytest.raises(type(exc)):
                    compiled(*compiled_leaves)
                break
            _same_nan(want, compiled(*compiled_leaves))
            _same_nan([t.grad for t in eager_leaves], [t.grad for t in compiled_leaves])
        replayed += compiled._ember_runner.replays > 0
    assert seen >= 45 and replayed >= 20, (seen, replayed)


def _detached(value):
    if isinstance(value, ember.Tensor):
        return value.detach()
    if isinstance(value, (tuple, list)):
        return type(value)(_detached(v) for v in value)
    return value


def test_a_leaf_from_outside_the_call_is_not_taken_for_one_made_inside():
    """The graph of a leaf the replay cannot name (held by a plain object, made before the
    call) is backpropagated inside the call: the recording stops, as ``.grad`` would not be
    written by a replay; and an alias made before the call of an argument is not read as
    the argument."""
    class Holder:
        pass
    holder = Holder()
    holder.w = ember.tensor([1.0, 2.0], requires_grad=True)
    y = holder.w + 0  # (its node saves nothing)

    def step(g, create_graph):
        y.backward(g, retain_graph=True, create_graph=create_graph)
        if create_graph:
            holder.w.grad = None
    for create_graph in (False, True):
        compiled = ember.compile(step)
        holder.w.grad = None
        for i in range(3):
            compiled(ember.tensor([1.0, 0.5 * i]), create_graph)
        _not_replayed(compiled, "")
        if not create_graph:
            assert holder.w.grad.tolist() == [3.0, 1.5]

    x0 = ember.tensor([1.0, 2.0])
    alias = x0.detach()  # (before the call: not the argument of a later call)

    def uses_alias(x):
        a = alias.requires_grad_(True)
        (g,) = ember.autograd.grad((a * x).sum(), a)
        alias.requires_grad_(False)
        return g
    compiled = ember.compile(uses_alias)
    for i in range(3):
        x = x0 if i == 0 else ember.tensor([3.0, 4.0 + i])
        assert compiled(x).tolist() == x.tolist()
    _not_replayed(compiled, "requires_grad_()")


@pytest.mark.parametrize("name", ["hvp", "vhp", "hessian", "jacobian_create_graph"])
def test_autograd_functional_higher_derivatives_replay(name):
    from ember.autograd import functional

    def f(x):
        return (ember.tanh(x) ** 3).sum() + (x[0] * x[1]).exp()
    calls = {
        "hvp": lambda x, v: functional.hvp(f, x, v)[1],
        "vhp": lambda x, v: functional.vhp(f, x, v)[1],
        "hessian": lambda x, v: functional.hessian(f, x),
        "jacobian_create_graph": lambda x, v: functional.jacobian(
            lambda t: ember.sin(t) * t.sum(), x, create_graph=True).detach(),
    }

    def build():
        return calls[name], []
    _replayed(_run_twins(build, _normal((3,), (3,), seed=32)))


def test_a_grad_detached_in_place_between_the_backwards_is_not_replayed():
    """``w.grad.detach_()`` after ``backward(create_graph=True)``: the next backward sums
    into that array in place, which a replay (whose ``.grad`` has no flags to clear) would
    not: the recording stops."""
    def build():
        w = ember.tensor([0.5, -1.0, 2.0], dtype=ember.float64, requires_grad=True)

        def step(x):
            w.grad = None
            (ember.sin(w) * x).sum().backward(create_graph=True)
            first = w.grad  # (eager's next backward sums into its array)
            w.grad.detach_()
            (ember.cos(w) * x).sum().backward()
            return first.detach()
        return step, [w]
    compiled = _run_twins(build, _normal((3,), seed=34), steps=4)
    _not_replayed(compiled, "requires_grad_()")


class _Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.attn(x, x, x)[0].mean(1))


class _Embedding(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb, self.head = nn.Embedding(5, 4), nn.Linear(12, 3)

    def forward(self, idx):
        return self.head(ember.tanh(self.emb(idx)).reshape(idx.shape[0], -1))


_MODELS = {
    "conv_maxpool_batchnorm": (
        lambda: nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3), nn.Tanh(),
                              nn.MaxPool2d(2), nn.Flatten(), nn.Linear(3 * 9, 3)),
        lambda rng: ember.tensor(rng.standard_normal((4, 2, 6, 6)), dtype=ember.float32)),
    "layernorm_gelu_dropout": (
        lambda: nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.GELU(), nn.Dropout(0.3),
                              nn.Linear(8, 3)),
        lambda rng: ember.tensor(rng.standard_normal((4, 6)), dtype=ember.float32)),
    "embedding": (_Embedding, lambda rng: ember.tensor(rng.integers(0, 5, (4, 3)))),
    "attention": (_Attention,
                  lambda rng: ember.tensor(rng.standard_normal((4, 5, 8)), dtype=ember.float32)),
}


@pytest.mark.parametrize("name", list(_MODELS))
def test_hvp_of_common_layers_replays(name):
    """Convolution, max pooling (its indices, kept by the forward for the rule, read by the
    rule's ops), batch norm, layer norm, GELU, dropout (its mask drawn anew by each replay),
    embedding and attention, under a double backward."""
    make, x_of = _MODELS[name]
    rng = np.random.default_rng(35)

    def inputs(i):
        return x_of(rng), ember.tensor(rng.integers(0, 3, 4))

    def build():
        ember.manual_seed(36)
        model = make()
        params = list(model.parameters())
        v = [ember.randn_like(p) for p in params]

        def step(x, y):
            loss = F.cross_entropy(model(x), y)
            grads = ember.autograd.grad(loss, params, create_graph=True)
            hv = ember.autograd.grad(sum((g * u).sum() for g, u in zip(grads, v)), params)
            return loss.detach(), hv
        return step, params
    _replayed(_run_twins(build, inputs, steps=4))


def test_a_none_argument_is_guarded():
    """(The guard's code once named ``NoneType``, which is no builtin: the call raised.)"""
    w = ember.tensor([0.5, 2.0], dtype=ember.float64, requires_grad=True)

    def step(x, scale):
        (g,) = ember.autograd.grad((ember.exp(w) * x).sum(), w, create_graph=True)
        out = g if scale is None else g * scale
        return ember.autograd.grad(out.sum(), w)[0]
    compiled = ember.compile(step)
    x = ember.tensor([1.0, -1.0], dtype=ember.float64)
    for scale in (None, None, 2.0, 2.0, None):
        same(step(x, scale), compiled(x, scale))
    assert compiled._ember_runner.replays == 3


@pytest.mark.parametrize("reduce", ["max", "min", "median"])
def test_hvp_through_a_reduction_that_picks_along_a_dim_replays(reduce):
    """The picked indices, reshaped for the scatter by a recorded call."""
    def build():
        w = ember.tensor([[0.5, -1.0, 2.0], [1.5, 0.3, -0.2]], dtype=ember.float64,
                         requires_grad=True)

        def step(x):
            picked = getattr(ember.sin(w * x), reduce)(dim=1).values
            (g,) = ember.autograd.grad((picked ** 2).sum(), w, create_graph=True)
            return ember.autograd.grad((g * x).sum(), w)[0], g.detach()
        return step, [w]
    _replayed(_run_twins(build, _normal((2, 3), seed=37)))
