"""Compiled mode (``ember/_dynamo/replay.py``): a call recorded once and replayed gives eager's
results bit for bit, for whole training steps (forward, backward, optimizer), and a call it
cannot record (a graph break) runs eagerly, as correct as ever.

Each test builds the same model twice from one seed, steps one eagerly and one compiled on
the same inputs, and compares every result, parameter, gradient, buffer and optimizer state
byte for byte after every step."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from ember._dynamo.exc import Unsupported
from tests.compile.common import array_bytes, same


def _same_state(objects_a, objects_b, versions=True):
    for a, b in zip(objects_a, objects_b):
        same(a.state_dict(), b.state_dict())
        if isinstance(a, nn.Module):
            for p, q in zip(a.parameters(), b.parameters()):
                assert (p.grad is None) == (q.grad is None)
                if p.grad is not None:
                    assert array_bytes(p.grad) == array_bytes(q.grad)
                assert p._version == q._version or not versions


def _run_twins(build, inputs, steps=20):
    """Step ``build()``'s step eagerly and compiled on ``inputs(i)``; returns the compiled
    function's runner (its entries and reasons)."""
    eager_step, eager_objects = build()
    plain_step, objects = build()
    compiled = ember.compile(plain_step)
    for i in range(steps):
        args = inputs(i)
        ember.manual_seed(100 + i)  # (each twin draws its step's dropout masks alike)
        want = eager_step(*args)
        ember.manual_seed(100 + i)
        got = compiled(*[a.clone() if isinstance(a, ember.Tensor) else a for a in args])
        same(want, got)
        _same_state(eager_objects, objects)
    return compiled._ember_runner


def _replayed(runner):
    assert runner.replays > 0, runner.reasons
    assert all(e is not None for e in runner.entries.values()), runner.reasons


def _batches(shape, classes, seed=0):
    rng = np.random.default_rng(seed)
    return lambda i: (ember.tensor(rng.standard_normal(shape), dtype=ember.float32),
                      ember.tensor(rng.integers(0, classes, shape[0])))


def _training(model_fn, optimizer_fn, loss_fn=F.cross_entropy, seed=0):
    def build():
        ember.manual_seed(seed)
        model = model_fn()
        opt = optimizer_fn(model.parameters())

        def step(x, y):
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss
        return step, [model, opt]
    return build


def _mlp():
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 16), nn.ReLU(),
                         nn.Linear(16, 4))


@pytest.mark.parametrize("optimizer", [
    lambda p: ember.optim.SGD(p, lr=0.1),
    lambda p: ember.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3),
    lambda p: ember.optim.Adam(p, lr=1e-2),
    lambda p: ember.optim.AdamW(p, lr=1e-2, weight_decay=0.1, amsgrad=True),
    lambda p: ember.optim.RMSprop(p, lr=1e-2),
], ids=["sgd", "sgd_nesterov", "adam", "adamw_amsgrad", "rmsprop"])
def test_mlp_training_replays_bit_for_bit(optimizer):
    _replayed(_run_twins(_training(_mlp, optimizer), _batches((8, 6), 4)))


def test_float64_and_mse_loss_replay():
    def model():
        return nn.Sequential(nn.Linear(3, 5), nn.Sigmoid(), nn.Linear(5, 2)).double()
    rng = np.random.default_rng(1)

    def inputs(i):
        return (ember.tensor(rng.standard_normal((4, 3))),
                ember.tensor(rng.standard_normal((4, 2))))
    build = _training(model, lambda p: ember.optim.SGD(p, lr=0.1), F.mse_loss)
    _replayed(_run_twins(build, inputs))


def test_cnn_with_batchnorm_and_dropout_replays_running_stats_and_draws():
    def model():
        return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.3),
                             nn.Linear(4 * 4 * 4, 3))
    build = _training(model, lambda p: ember.optim.SGD(p, lr=0.05, momentum=0.9))
    _replayed(_run_twins(build, _batches((5, 2, 8, 8), 3)))


def test_gru_language_model_replays():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(11, 8)
            self.gru = nn.GRU(8, 12, batch_first=True)
            self.head = nn.Linear(12, 11)

        def forward(self, idx):
            out, _ = self.gru(self.emb(idx))
            return self.head(out).reshape(-1, 11)

    rng = np.random.default_rng(2)

    def inputs(i):
        idx = rng.integers(0, 11, (3, 5))
        return ember.tensor(idx), ember.tensor(rng.integers(0, 11, 15))
    build = _training(Model, lambda p: ember.optim.Adam(p, lr=1e-2))
    _replayed(_run_twins(build, inputs))


def test_small_transformer_with_adamw_replays():
    class Block(nn.Module):
        def __init__(self, d=16, heads=2, vocab=13, t=6):
            super().__init__()
            self.emb, self.pos = nn.Embedding(vocab, d), nn.Embedding(t, d)
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
            self.head = nn.Linear(d, vocab)
            self.heads = heads
            self.register_buffer("mask", ember.tril(ember.ones(t, t)).bool())

        def forward(self, idx):
            b, t = idx.shape
            x = self.emb(idx) + self.pos(ember.arange(t))
            q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], dim=2)
            q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)
            att = att.masked_fill(~self.mask[:t, :t], float("-inf")).softmax(-1)
            x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, -1))
            x = x + self.mlp(self.ln2(x))
            return self.head(x).reshape(b * t, -1)

    rng = np.random.default_rng(3)

    def inputs(i):
        return (ember.tensor(rng.integers(0, 13, (2, 6))), ember.tensor(rng.integers(0, 13, 12)))
    build = _training(Block, lambda p: ember.optim.AdamW(p, lr=1e-2))
    _replayed(_run_twins(build, inputs))


def test_manual_sgd_with_in_place_updates_and_grad_none():
    def build():
        ember.manual_seed(4)
        w = ember.randn(5, 3, requires_grad=True)
        b = ember.zeros(3, requires_grad=True)
        model = nn.Module()
        model.w, model.b = nn.Parameter(w.detach()), nn.Parameter(b.detach())

        def step(x, y):
            loss = ((x @ model.w + model.b - y) ** 2).mean()
            loss.backward()
            with ember.no_grad():
                for p in (model.w, model.b):
                    p -= 0.1 * p.grad
                    p.grad = None
            return loss
        return step, [model]
    rng = np.random.default_rng(5)

    def inputs(i):
        return (ember.tensor(rng.standard_normal((4, 5)), dtype=ember.float32),
                ember.tensor(rng.standard_normal((4, 3)), dtype=ember.float32))
    _replayed(_run_twins(build, inputs))


def test_inference_under_no_grad_replays():
    ember.manual_seed(6)
    model = _mlp().eval()

    def predict(x):
        with ember.no_grad():
            return model(x).softmax(-1).argmax(-1), model(x)
    compiled = ember.compile(predict)
    x = ember.randn(7, 6)
    for _ in range(3):
        same(predict(x), compiled(x))
    _replayed(compiled._ember_runner)


def test_result_of_a_step_has_a_used_graph_as_eager():
    step, _ = _training(_mlp, lambda p: ember.optim.SGD(p, lr=0.1))()
    compiled = ember.compile(step)
    x, y = _batches((8, 6), 4)(0)
    compiled(x, y)
    loss = compiled(x, y)
    assert loss.requires_grad and type(loss.grad_fn).__name__ == "CompiledFunctionBackward"
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        loss.backward()


# --------------------------------------------------------------------------- guards


def test_a_new_shape_records_again_and_each_shape_replays():
    build = _training(_mlp, lambda p: ember.optim.SGD(p, lr=0.1))
    small, large = _batches((3, 6), 4, seed=1), _batches((9, 6), 4, seed=2)
    runner = _run_twins(build, lambda i: (small if i % 2 else large)(i), steps=8)
    assert len(runner.entries) == 2
    _replayed(runner)


def test_training_flag_and_grad_mode_are_guarded():
    ember.manual_seed(7)
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
    twin = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
    twin.load_state_dict(model.state_dict())
    x = ember.randn(6, 4)
    compiled = ember.compile(lambda: twin(x) * 2)
    for mode in ["train", "eval", "train", "eval"]:
        for m in (model, twin):
            getattr(m, mode)()
        with ember.no_grad():
            same(model(x) * 2, compiled())
        _same_state([model], [twin], versions=False)
    assert len(compiled._ember_runner.entries) == 2
    _replayed(compiled._ember_runner)


_FACTOR = 2.0


def test_a_global_scalar_the_function_reads_is_guarded():
    ember.manual_seed(8)
    w = ember.randn(3)
    globals()["_FACTOR"] = 2.0

    def fn(x):
        return x * w * _FACTOR
    compiled = ember.compile(fn)
    x = ember.randn(3)
    same(fn(x), compiled(x))
    same(fn(x), compiled(x))
    globals()["_FACTOR"] = 5.0
    same(fn(x), compiled(x))
    same(fn(x), compiled(x))
    assert len(compiled._ember_runner.entries) == 2


def test_recompile_limit_warns_once_and_runs_eagerly(monkeypatch):
    monkeypatch.setattr(ember._dynamo.config, "recompile_limit", 2)
    compiled = ember.compile(lambda x: x.exp() + 1)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for n in range(1, 6):
            x = ember.randn(n)
            same(x.exp() + 1, compiled(x))
    assert len([w for w in seen if "recompile_limit" in str(w.message)]) == 1
    assert len(compiled._ember_runner.entries) == 2


# --------------------------------------------------------------------------- graph breaks


def test_item_is_a_graph_break_and_the_call_runs_eagerly():
    def fn(x):
        y = x.exp()
        if y.sum().item() > 3:
            return y * 2
        return y - 1
    compiled = ember.compile(fn)
    for scale in [1.0, 0.01, 1.0]:
        x = ember.ones(4) * scale
        same(fn(x), compiled(x))
    runner = compiled._ember_runner
    assert list(runner.entries.values()) == [None]
    assert "item()" in list(runner.reasons.values())[0]


def test_fullgraph_raises_at_a_graph_break():
    compiled = ember.compile(lambda x: x * x.sum().item(), fullgraph=True)
    with pytest.raises(Unsupported, match=r"Tensor.item\(\)"):
        compiled(ember.ones(3))


def test_printing_is_a_graph_break():
    def fn(x):
        y = x + 1
        print(y)
        return y
    compiled = ember.compile(fn)
    compiled(ember.ones(2))
    assert list(compiled._ember_runner.entries.values()) == [None]


def test_random_draws_replay_from_the_generator_of_the_time():
    """Dropout draws a new mask each step, in the replay too, from the generator as it is at
    each call (``manual_seed`` between calls included)."""
    def build():
        ember.manual_seed(9)
        model = nn.Sequential(nn.Linear(6, 8), nn.Dropout(0.5), nn.Linear(8, 4))
        opt = ember.optim.SGD(model.parameters(), lr=0.1)

        def step(x, y):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss, ember.rand(2)
        return step, [model, opt]
    eager_step, eager_objects = build()
    step, objects = build()
    compiled = ember.compile(step)
    inputs = [_batches((8, 6), 4)(i) for i in range(6)]
    for run in (eager_step, compiled):
        ember.manual_seed(10)
        got = [run(*xy) for xy in inputs[:3]]
        ember.manual_seed(10)
        got += [run(*xy) for xy in inputs[3:]]
        if run is eager_step:
            want = got
    same(want, got)
    _same_state(eager_objects, objects)
    _replayed(compiled._ember_runner)


def test_a_compiled_module_whose_backward_runs_outside_replays_it():
    ember.manual_seed(11)
    model = _mlp()
    twin = _mlp()
    twin.load_state_dict(model.state_dict())
    compiled = ember.compile(twin)
    opts = [ember.optim.Adam(m.parameters(), lr=1e-2) for m in (model, twin)]
    inputs = _batches((5, 6), 4)
    for i in range(5):
        x, y = inputs(i)
        a, b = F.cross_entropy(model(x), y), F.cross_entropy(compiled(x), y)
        same(a, b)
        a.backward()
        b.backward()
        _same_state([model], [twin], versions=False)
        for opt in opts:
            opt.step()
            opt.zero_grad()
    runner = compiled._compiled_call[1]._ember_runner
    _replayed(runner)
    out = compiled(x)
    assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"
    assert {type(fn).__name__ for fn, _ in out.grad_fn.next_functions} == {"AccumulateGrad"}


def _seeded_input(step):
    """A (4, 3) input requiring grad, the same for the eager and the compiled run."""
    return ember.randn(4, 3, generator=ember.Generator().manual_seed(step)).requires_grad_()


def test_compiled_forward_backward_reaches_arguments_and_their_history():
    ember.manual_seed(14)
    w = nn.Parameter(ember.randn(3, 3))

    def fn(x, h):
        y = (x @ w).tanh()
        return y * h, (y * y).sum()
    compiled = ember.compile(fn)
    for step in range(3):
        grads = []
        for run in (fn, compiled):
            w.grad = None
            x = _seeded_input(step)
            base = ember.linspace(-1, 1, 3, requires_grad=True)
            h = base * 2  # (an argument with history)
            out, total = run(x, h)
            (out.sum() + total).backward(retain_graph=True)
            out.sum().backward()  # (a second backward through the retained graph)
            grads.append([x.grad, base.grad, w.grad, out, total])
        same(*grads)
    _replayed(compiled._ember_runner)
    x = ember.randn(4, 3, requires_grad=True)
    compiled(x, ember.ones(3))  # (a new guard: recorded)
    out, total = compiled(x, ember.ones(3))
    total.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        total.backward()
    x.grad = None  # (as when recorded: else a new recording, eager, would answer)
    out, total = compiled(x, ember.ones(3))
    with pytest.raises(RuntimeError, match="create_graph=True"):
        ember.autograd.grad(total, x, create_graph=True)


def test_python_state_ember_does_not_record_is_a_graph_break():
    """An LR scheduler's step and a module attribute set inside the function change Python
    state a replay would skip: the call runs eagerly."""
    def build():
        ember.manual_seed(12)
        model = _mlp()
        opt = ember.optim.SGD(model.parameters(), lr=0.1)
        sched = ember.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

        def step(x, y):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            sched.step()
            model.calls = getattr(model, "calls", 0) + 1
            return loss
        return step, [model, opt]
    runner = _run_twins(build, _batches((8, 6), 4), steps=6)
    assert list(runner.entries.values()) == [None]
    assert "scheduler" in list(runner.reasons.values())[0]


def test_guards_follow_parameters_gradients_and_argument_objects():
    ember.manual_seed(13)
    model = nn.Linear(3, 2)
    calls = []

    def fn(x, scale, tag):
        calls.append(tag)
        return model(x) * scale
    compiled = ember.compile(fn)
    x = ember.randn(4, 3)
    tag = object()
    with ember.no_grad():
        for _ in range(2):
            same(fn(x, 2.0, tag), compiled(x, 2.0, tag))
        same(fn(x, 3.0, tag), compiled(x, 3.0, tag))  # a new Python value: recorded anew
        same(fn(x, 3.0, object()), compiled(x, 3.0, object()))  # another object: anew
        model.weight.requires_grad_(False)  # a parameter's flag: anew
        same(fn(x, 3.0, tag), compiled(x, 3.0, tag))
        model.weight.data = ember.randn(2, 3).double().float()  # new values, same layout
        same(fn(x, 3.0, tag), compiled(x, 3.0, tag))
    runner = compiled._ember_runner
    assert len(runner.entries) == 4 and runner.replays == 2
    assert all(e is not None for e in runner.entries.values())


def test_explain_reports_a_graph_or_a_break_with_its_user_line():
    def good(x):
        return (x * 2).exp().sum()

    def bad(x):
        y = x * 2
        if y.sum() > 0:  # (a tensor's value decides: a graph break)
            y = y + 1
        return y
    out = ember._dynamo.explain(good)(ember.ones(3))
    assert (out.graph_count, out.graph_break_count, out.break_reasons) == (1, 0, [])
    assert out.op_count >= 3 and "def replay" in out.graphs[0].source
    text = str(out)
    assert text.startswith("Graph Count: 1\nGraph Break Count: 0\nOp Count: ")
    out = ember._dynamo.explain(bad)(ember.ones(3))
    assert (out.graph_count, out.graph_break_count) == (0, 1)
    reason = out.break_reasons[0]
    assert "Tensor.item()" in reason.reason
    assert reason.user_stack[-1].line.startswith("if y.sum() > 0:")
    assert "Break Reason 1:\n    Reason: Tensor.item()" in str(out)


def test_graph_break_disable_is_compiling_and_reset():
    seen = []

    @ember._dynamo.disable
    def helper(y):
        return y + 1

    def fn(x, which):
        seen.append(ember.compiler.is_compiling())
        if which == "break":
            ember._dynamo.graph_break()
        if which == "disabled":
            return helper(x)
        return x * 3
    compiled = ember.compile(fn)
    x = ember.ones(2)
    for which in ["plain", "plain", "break", "break", "disabled", "disabled"]:
        same(fn(x, which), compiled(x, which))
    runner = compiled._ember_runner
    assert list(runner.entries.values())[0] is not None
    assert [r for r in runner.reasons.values()] == [
        "torch._dynamo.graph_break()",
        "test_graph_break_disable_is_compiling_and_reset.<locals>.helper is under "
        "torch._dynamo.disable"]
    # (eager, then compiled: recorded, replayed (not run), recorded, eager, recorded, eager)
    assert seen == [False, True, False, False, True, False, False, False, True, False, False]
    ember._dynamo.reset()
    assert not runner.entries
    same(fn(x, "plain"), compiled(x, "plain"))
    assert len(runner.entries) == 1


def test_value_checks_in_ember_run_again_in_each_replay():
    """Checks ember makes on index values (embedding, cross-entropy targets, one-hot, gather)
    are replayed: a bad value raises PyTorch's error, never reads another row; and a choice
    made on values (cross-entropy with or without ignored targets) is not frozen."""
    ember.manual_seed(15)
    emb = nn.Embedding(5, 3)
    f = ember.compile(lambda i: emb(i) * 2)
    for good in ([1, 2], [3, 4]):
        same(emb(ember.tensor(good)) * 2, f(ember.tensor(good)))
    for bad in ([1, 7], [1, -1]):
        with pytest.raises(IndexError, match="index out of range in self"):
            f(ember.tensor(bad))
    assert f._ember_runner.replays >= 3
    x = ember.randn(4, 5, requires_grad=True)
    g = ember.compile(lambda x, t: F.cross_entropy(x, t, ignore_index=-1))
    for t in ([1, 2, 3, 4], [1, -1, 3, 4], [-1, -1, -1, -1], [0, 1, 2, -1]):
        same(F.cross_entropy(x, ember.tensor(t), ignore_index=-1), g(x, ember.tensor(t)))
    with pytest.raises(IndexError, match="Target 9 is out of bounds"):
        g(x, ember.tensor([1, 9, 3, 4]))
    assert g._ember_runner.replays >= 3


_HELPER_MODEL = None


def _helper_loss(x, y):
    return F.cross_entropy(_HELPER_MODEL(x), y)


def test_modules_reached_through_helper_functions_and_compiled_callees_replay():
    """A step that calls a helper function (itself reading a global model) and another
    compiled function reaches their modules and tensors too, so it replays."""
    global _HELPER_MODEL
    ember.manual_seed(16)
    _HELPER_MODEL = _mlp()
    opt = ember.optim.SGD(_HELPER_MODEL.parameters(), lr=0.1)
    inner = ember.compile(lambda x, y: _helper_loss(x, y))

    def step(x, y):
        loss = inner(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    compiled = ember.compile(step)
    inputs = _batches((8, 6), 4)
    for i in range(4):
        compiled(*inputs(i))
    _replayed(compiled._ember_runner)


def test_writes_through_views_replay_with_their_gradients():
    """``out[:, k] = f(x)`` in a loop (a buffer filled column by column) and an in-place op
    on a view: the CopySlices and AsStrided nodes' backward is recorded too."""
    ember.manual_seed(17)
    w = nn.Parameter(ember.randn(3))

    def fn(x):
        out = ember.zeros(4, 3)
        for k in range(3):
            out[:, k] = x[:, k] * w[k]
        view = out[1:]
        view.mul_(2)
        return (out.exp() * view.sum()).sum()
    compiled = ember.compile(fn)

    def step_of(run, step):
        w.grad = None
        x = _seeded_input(step)
        loss = run(x)
        loss.backward()
        return [loss, x.grad, w.grad]
    for step in range(3):
        same(step_of(fn, step), step_of(compiled, step))
    _replayed(compiled._ember_runner)


def test_gradient_clipping_in_the_step_replays():
    """clip_grad_norm_'s fused norm and in-place scaling of every .grad are recorded calls."""
    def build():
        ember.manual_seed(18)
        model = _mlp()
        opt = ember.optim.AdamW(model.parameters(), lr=1e-2)

        def step(x, y):
            loss = F.cross_entropy(model(x), y) * 50  # (large gradients: the clip bites)
            loss.backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad()
            return loss, norm
        return step, [model, opt]
    _replayed(_run_twins(build, _batches((8, 6), 4), steps=6))


_REBOUND_MODEL = None


def test_a_name_that_holds_another_model_since_is_guarded():
    """A global rebound to a new model, a submodule replaced, a parameter replaced: the
    recording made with the old objects is not replayed on them."""
    global _REBOUND_MODEL
    ember.manual_seed(19)
    _REBOUND_MODEL = _mlp()

    def fn(x):
        return _REBOUND_MODEL(x).sum()
    compiled = ember.compile(fn)
    x = ember.randn(5, 6)
    with ember.no_grad():
        for change in (None, "global", "submodule", "parameter"):
            if change == "global":
                _REBOUND_MODEL = _mlp()
            elif change == "submodule":
                _REBOUND_MODEL[0] = nn.Linear(6, 16)
            elif change == "parameter":
                _REBOUND_MODEL[2].weight = nn.Parameter(ember.randn(16, 16))
            for _ in range(2):
                same(fn(x), compiled(x))
    runner = compiled._ember_runner
    assert len(runner.entries) == 4 and runner.replays == 4


def test_a_detached_parameter_or_argument_is_read_as_its_tensor():
    """``p.detach()`` of a parameter (an EMA update) or of an argument shares its array: the
    replay reads that tensor's array, as it is at each call."""
    def build():
        ember.manual_seed(0)
        model = nn.Linear(4, 3)
        ema = nn.Linear(4, 3)

        def step(x, y):
            out = model(x.detach() * 2).sum()
            out.backward()
            with ember.no_grad():
                for e, p in zip(ema.parameters(), model.parameters()):
                    e.mul_(0.9).add_(p.detach(), alpha=0.1)
                    p.sub_(p.grad, alpha=0.1)
                    p.grad = None
            return out
        return step, [model, ema]

    _replayed(_run_twins(build, _batches((5, 4), 3)))


def test_an_ops_fixed_parameter_array_is_read_as_a_constant():
    """``split``'s bounds are an array made from Python values (``_recording.fixed``): the
    replay reads it as a constant, never as a slot it could delete or reuse (found by the
    fuzzer: a one-piece split's result)."""
    def f(x):
        return x.rsqrt().asinh().log10().split(1, -1)

    compiled = ember.compile(f)
    for k in range(3):
        x = ember.tensor([5.0 + k])
        same(f(x), compiled(x))
    _replayed(compiled._ember_runner)
