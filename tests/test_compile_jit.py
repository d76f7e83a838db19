"""``torch.compile``, ``torch._dynamo``, ``torch.compiler`` and ``torch.jit`` run code eagerly
in ember; what scripts see of them (signatures, wrappers, state_dict keys, errors, warnings)
is compared with PyTorch 2.13."""
import inspect
import warnings

import numpy as np
import pytest

import ember

from .conftest import to_np


def _params(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


def test_compile_signature_is_torchs(torch):
    assert _params(ember.compile) == _params(torch.compile)
    assert _params(ember.jit.trace) == [
        (n, k, None if n == "_compilation_unit" else d) for n, k, d in _params(torch.jit.trace)]
    for name in ["script", "ignore", "freeze", "save", "load", "annotate"]:
        assert _params(getattr(ember.jit, name)) == _params(getattr(torch.jit, name)), name
    for name in ["disable", "mark_dynamic", "allow_in_graph", "reset"]:
        assert _params(getattr(ember._dynamo, name)) == _params(getattr(torch._dynamo, name))


def _pair(torch):
    """The same Linear+ReLU model in ember and PyTorch."""
    rng = np.random.default_rng(0)
    w, b = rng.standard_normal((3, 4)), rng.standard_normal(3)
    models = []
    for lib in (ember, torch):
        m = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.ReLU())
        with lib.no_grad():
            m[0].weight.copy_(lib.tensor(w, dtype=lib.float32))
            m[0].bias.copy_(lib.tensor(b, dtype=lib.float32))
        models.append(m)
    return models, rng.standard_normal((2, 4))


@pytest.mark.slow
def test_compiled_module_is_an_optimized_module_like_torchs(torch):
    (em, tm), x = _pair(torch)
    ec, tc = ember.compile(em), torch.compile(tm, backend="eager")
    assert type(ec).__name__ == type(tc).__name__ == "OptimizedModule"
    assert isinstance(ec, ember._dynamo.OptimizedModule) and isinstance(ec, ember.nn.Module)
    assert repr(ec) == repr(tc)
    assert list(ec.state_dict()) == list(tc.state_dict())
    assert [n for n, _ in ec.named_parameters()] == [n for n, _ in tc.named_parameters()]
    assert ec._orig_mod is em and ec.__getattr__('0') is em[0] and len(ec) == len(tc) == 2
    out = ec(ember.tensor(x, dtype=ember.float32))
    want = tc(torch.tensor(x, dtype=torch.float32))
    np.testing.assert_allclose(to_np(out), to_np(want), rtol=1e-6)
    out.sum().backward()
    assert em[0].weight.grad is not None
    ec.eval()
    assert not em.training and not ec.training and not em[0].training
    ec.note = 5  # attributes go to the original module
    assert em.note == 5 and "note" not in ec.__dict__
    import copy
    twin = copy.deepcopy(ec)  # its own module, which it calls
    with ember.no_grad():
        twin._orig_mod[0].bias.fill_(100.0)
    ones = ember.ones(1, 4)
    assert twin(ones).min().item() > 50 and ec(ones).max().item() < 50
    fresh = ember.nn.Sequential(ember.nn.Linear(4, 3), ember.nn.ReLU())
    ember.compile(fresh).load_state_dict(ec.state_dict())
    assert ember.equal(fresh[0].weight, em[0].weight)
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "0.weight"'):
        fresh.load_state_dict(ec.state_dict())


def test_compiled_function_and_decorators(torch):
    def f(x):
        """doc"""
        return (x * x).sum()
    for lib in (ember, torch):
        kw = {} if lib is ember else {"backend": "eager"}
        cf = lib.compile(f, **kw)
        assert cf is not f and cf.__wrapped__ is f and cf.__name__ == "f" and cf.__doc__ == "doc"
        assert cf(lib.tensor([1.0, 2.0])).item() == 5.0
        deco = lib.compile(mode="reduce-overhead", **kw)
        assert deco(f)(lib.tensor([3.0])).item() == 9.0
        assert lib.compile(f, disable=True) is f
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    ember.compile(f)(x).backward()
    assert x.grad.tolist() == [2.0, 4.0]
    m = ember.nn.Linear(2, 2)
    assert m.compile() is None and isinstance(m, ember.nn.Linear)


@pytest.mark.parametrize("call", [
    "T.compile(5)", "T.compile(f, mode='foo')", "T.compile(f, backend='foo')",
    "T.compile(f, mode='max-autotune', options={'a': 1})", "T._dynamo.config.nope",
    "setattr(T._dynamo.config, 'nope', 1)", "T._inductor.config.triton.nope",
    "T._dynamo.config.suppress_errors", "T._dynamo.config.cache_size_limit",
    "T._dynamo.config.recompile_limit", "T._dynamo.config.capture_scalar_outputs",
    "T._dynamo.config.automatic_dynamic_shapes", "T._dynamo.config.optimize_ddp",
    "T._inductor.config.coordinate_descent_tuning", "T._inductor.config.triton.cudagraphs",
    "T._inductor.config.fx_graph_cache", "T._dynamo.is_compiling()",
    "T.compiler.is_compiling()", "T.compiler.is_dynamo_compiling()", "T._dynamo.reset()",
    "T.compiler.reset()", "T._dynamo.allow_in_graph(f) is f",
    "T._dynamo.mark_dynamic(T.ones(3), 0)", "T._dynamo.disable(f)(2)",
    "T._dynamo.disable(f).__wrapped__ is f", "T._dynamo.disable(recursive=False)(f)(2)",
    "T.compiler.disable(f)(3)", "T.compile(f, backend='eager')(2)",
])
def test_dynamo_surface_matches_torch(torch, call):
    with warnings.catch_warnings():  # PyTorch's first compile imports TorchScript, which warns
        warnings.simplefilter("ignore")
        torch.compile(lambda x: x, backend="eager")(torch.ones(1))
        with pytest.raises(AssertionError):
            torch.compile(5)
        import torch._inductor.config  # noqa: F401
    from .test_cpu_modules import same
    same(torch, call, f=lambda x: x * 2)


def test_dynamo_config_keeps_settings_and_patches(torch):
    for lib in (ember, torch):
        config = lib._dynamo.config
        config.suppress_errors = True
        try:
            assert config.suppress_errors is True
            with config.patch(suppress_errors=False, cache_size_limit=64):
                assert config.suppress_errors is False and config.cache_size_limit == 64
            assert config.suppress_errors is True and config.cache_size_limit == 8

            @config.patch("cache_size_limit", 16)
            def read():
                return config.cache_size_limit
            assert read() == 16 and config.cache_size_limit == 8
        finally:
            config.suppress_errors = False


def test_custom_backend_functions_refuse_clearly():
    with pytest.raises(NotImplementedError, match="backend=<a function>"):
        ember.compile(lambda x: x, backend=lambda gm, inputs: gm)


# --------------------------------------------------------------------------- jit

def _warned(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, {(w.category.__name__, str(w.message)) for w in caught}


def test_script_and_trace_run_eagerly_with_torchs_reprs_and_warnings(torch):
    (em, tm), x = _pair(torch)
    results, outputs = [], []
    for lib, m in ((ember, em), (torch, tm)):
        xs = lib.tensor(x, dtype=lib.float32)
        sm, w1 = _warned(lambda: lib.jit.script(m))  # noqa: B023
        tr, w2 = _warned(lambda: lib.jit.trace(m, xs))  # noqa: B023
        assert isinstance(sm, lib.jit.ScriptModule) and isinstance(tr, lib.jit.ScriptModule)
        assert isinstance(sm, lib.nn.Module) and sm[0].weight is m[0].weight
        sm.eval()  # the scripted module's own flag: the original stays in training mode
        modes = (m.training, sm.training, getattr(sm, '1').training)
        sm.train()
        outputs.append((to_np(sm(xs)), to_np(tr(xs)), to_np(m(xs))))
        results.append((modes, repr(sm), repr(tr), list(sm.state_dict()), list(tr.state_dict()),
                        w1,
                        ("DeprecationWarning", "`torch.jit.trace` is deprecated. Please "
                         "switch to `torch.compile` or `torch.export`.") in w2))
    assert results[0] == results[1]
    for mine, theirs in zip(*outputs):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(outputs[0][0], outputs[0][2])  # eager, exactly


def test_scripted_and_traced_functions(torch):
    def f(x):
        return x * 2 + 1
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0])
        sf, _ = _warned(lambda: lib.jit.script(f))  # noqa: B023
        tf, _ = _warned(lambda: lib.jit.trace(f, (x,)))  # noqa: B023
        assert type(sf).__name__ == type(tf).__name__ == "ScriptFunction"
        assert sf(x).tolist() == tf(x).tolist() == [3.0, 5.0] and sf.name == "f"


@pytest.mark.parametrize("call", [
    "T.jit.is_scripting()", "T.jit.is_tracing()", "T.jit.ignore(f) is f",
    "T.jit.ignore(drop=True)(f) is f", "T.jit.unused(f) is f", "T.jit.export(f) is f",
    "T.jit.annotate(int, 3)", "T.jit.Final is typing.Final", "T.jit.Final[int]",
    "T.jit.Attribute(1, int)", "T.jit.wait(T.jit.fork(f, 2))", "T.jit.script_if_tracing(f)(4)",
])
def test_jit_helpers_match_torch(torch, call):
    import typing

    from .test_cpu_modules import same
    same(torch, call, f=lambda x: x * 2, typing=typing)


def test_is_tracing_is_true_while_trace_runs():
    seen = []
    with pytest.warns(DeprecationWarning, match="torch.jit.trace"):
        ember.jit.trace(lambda x: seen.append(ember.jit.is_tracing()) or x, ember.ones(1))
    assert seen == [True] and not ember.jit.is_tracing()


def test_torchscript_archives_refuse_clearly(tmp_path):
    m = ember.nn.Linear(2, 2)
    for call in (lambda: ember.jit.save(ember.jit.script(m), str(tmp_path / "m.pt")),
                 lambda: ember.jit.load(str(tmp_path / "m.pt"))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(NotImplementedError, match="TorchScript archives are not "
                                                          "supported by ember"):
                call()
