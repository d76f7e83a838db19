"""Grad-mode context managers and decorators (``no_grad``, ``enable_grad``,
``set_grad_enabled``, ``inference_mode``), each scenario run on ember and on PyTorch and the
grad mode seen at every step compared."""
import threading
import warnings

import pytest

import ember


@pytest.fixture(autouse=True)
def _restore_grad_mode(torch):
    yield
    ember.set_grad_enabled(True)
    torch.set_grad_enabled(True)


def _modes(lib):
    return (lib.is_grad_enabled(), lib.is_inference_mode_enabled())


def _same(torch, scenario):
    """Run ``scenario(lib)`` (which returns what it observed) on both libraries."""
    got = scenario(ember)
    want = scenario(torch)
    assert got == want
    assert _modes(ember) == _modes(torch)  # the mode the scenario left behind
    return got


def _decorated_forms(lib):
    """Each way of decorating a function with a grad mode, PyTorch's spellings."""
    return {
        "@no_grad": lib.no_grad,
        "@no_grad()": lib.no_grad(),
        "@enable_grad": lib.enable_grad,
        "@enable_grad()": lib.enable_grad(),
        "@inference_mode": lib.inference_mode,
        "@inference_mode()": lib.inference_mode(),
        "@inference_mode(False)": lib.inference_mode(False),
        "@set_grad_enabled(False)": lib.set_grad_enabled(False),
        "@set_grad_enabled(True)": lib.set_grad_enabled(True),
        "@autograd.grad_mode.no_grad": lib.autograd.grad_mode.no_grad,
    }


@pytest.mark.parametrize("form", list(_decorated_forms(ember)))
@pytest.mark.parametrize("outer", ["enabled", "no_grad", "inference_mode"])
def test_decorator_forms(torch, form, outer):
    def scenario(lib):
        seen = []
        ctx = {"enabled": lib.enable_grad, "no_grad": lib.no_grad,
               "inference_mode": lib.inference_mode}[outer]
        with ctx():
            deco = _decorated_forms(lib)[form]
            seen.append(("after decorating", _modes(lib)))

            def f(x, *, y=1):
                """f's docstring."""
                return _modes(lib), x + y
            g = deco(f)
            seen.append(("call", g(1, y=2)))
            seen.append(("after call", _modes(lib)))
            seen.append(("wraps", g.__name__, g.__doc__, g.__wrapped__ is f))
        seen.append(("after block", _modes(lib)))
        return seen
    _same(torch, scenario)


@pytest.mark.parametrize("form", list(_decorated_forms(ember)))
def test_decorated_function_records_as_torch(torch, form):
    def scenario(lib):
        @_decorated_forms(lib)[form]
        def double(t):
            return t * 2
        x = lib.ones(2, requires_grad=True)
        y = double(x)
        return y.requires_grad, y.grad_fn is None
    _same(torch, scenario)


def test_set_grad_enabled_function_form(torch):
    def scenario(lib):
        seen = []
        mode = lib.set_grad_enabled(False)  # switches at once, no `with` needed
        seen.append(_modes(lib))
        x = lib.ones(2, requires_grad=True)
        seen.append((x * 2).requires_grad)
        with mode:
            seen.append(_modes(lib))
        seen.append(_modes(lib))  # exit restores the mode found at construction
        lib.set_grad_enabled(False)
        with lib.set_grad_enabled(True):
            seen.append(_modes(lib))
        seen.append(_modes(lib))
        seen.append(repr(lib.set_grad_enabled(True)))
        return seen
    _same(torch, scenario)


def test_set_grad_enabled_decorator_restores(torch):
    """The decorator form must not leave autograd off after decorating or after a call."""
    def scenario(lib):
        @lib.set_grad_enabled(False)
        def f(t):
            return (t * 2).requires_grad, _modes(lib)
        x = lib.ones(2, requires_grad=True)
        return _modes(lib), f(x), _modes(lib), (x * 2).requires_grad
    assert _same(torch, scenario)[0] == (True, False)


@pytest.mark.parametrize("value", [1, 0.0, None, "x"])
def test_set_grad_enabled_wants_bool(torch, value):
    with pytest.raises(TypeError) as want:
        torch.set_grad_enabled(value)
    with pytest.raises(TypeError) as got:
        ember.set_grad_enabled(value)
    assert str(got.value) == str(want.value)


def test_set_grad_enabled_rejects_tensor_and_numpy_bool(torch):
    import numpy as np
    for value, ev in ((torch.tensor(True), ember.tensor(True)), (np.bool_(True),) * 2):
        with pytest.raises(TypeError) as want:
            torch.set_grad_enabled(value)
        with pytest.raises(TypeError) as got:
            ember.set_grad_enabled(ev)
        assert str(got.value) == str(want.value)


def test_inference_mode_nesting(torch):
    def scenario(lib):
        seen = []
        with lib.no_grad():
            with lib.inference_mode(False):
                seen.append(_modes(lib))
            seen.append(_modes(lib))
        with lib.inference_mode():
            seen.append(_modes(lib))
            with lib.inference_mode(False):
                seen.append(_modes(lib))
            with lib.enable_grad():
                seen.append(_modes(lib))
            with lib.set_grad_enabled(True):
                seen.append(_modes(lib))
            seen.append(_modes(lib))
        seen.append(_modes(lib))
        return seen
    _same(torch, scenario)


def test_enter_returns_none_and_clone(torch):
    def scenario(lib):
        seen = []
        for mode in (lib.no_grad(), lib.enable_grad(), lib.set_grad_enabled(True),
                     lib.inference_mode(), lib.inference_mode(False)):
            with mode as entered:
                seen.append(entered)
            c = mode.clone()
            seen.append((type(c).__name__, c is mode))
        return seen
    _same(torch, scenario)


def test_reentering_one_object(torch):
    """PyTorch keeps one saved mode per object: re-entering it nested loses the outer one."""
    def scenario(lib):
        ng = lib.no_grad()
        with ng:
            with ng:
                pass
        return _modes(lib)
    _same(torch, scenario)


def test_methods_and_recursion(torch):
    def scenario(lib):
        class Model:
            @lib.no_grad()
            def predict(self, n):
                if n:
                    return [_modes(lib)] + self.predict(n - 1)
                return [_modes(lib)]

            @lib.enable_grad
            def train_step(self):
                return _modes(lib)
        m = Model()
        with lib.no_grad():
            inner = m.train_step()
        return m.predict(2), inner, _modes(lib), Model.predict.__name__
    _same(torch, scenario)


def test_decorated_generator(torch):
    """The body runs under the mode each time it resumes; the caller keeps its own mode."""
    def scenario(lib):
        seen = []

        @lib.no_grad()
        def gen(n):
            """gen's docstring."""
            got = yield _modes(lib)
            seen.append(("sent", got, _modes(lib)))
            try:
                yield _modes(lib)
            except ValueError as e:
                seen.append(("thrown", str(e), _modes(lib)))
                yield "after throw"
            try:
                yield "last"
            finally:
                seen.append(("closed", _modes(lib)))
            return n

        it = gen(7)
        seen.append(next(it))
        seen.append(("caller", _modes(lib)))
        seen.append(it.send("hello"))
        seen.append(it.throw(ValueError("boom")))
        seen.append(next(it))
        it.close()
        seen.append(("caller", _modes(lib)))
        it = gen(8)
        seen.append(list(it))
        seen.append((gen.__name__, gen.__doc__))
        with lib.inference_mode():
            it = gen(9)
            next(it)
            it.send(None)
            next(it)
            try:
                while True:
                    next(it)
            except StopIteration as stop:
                seen.append(("returned", stop.value))
        return seen
    _same(torch, scenario)


def test_decorating_a_class_warns(torch):
    def scenario(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")

            @lib.no_grad()
            class C:
                def __init__(self):
                    self.mode = _modes(lib)
        return [(x.category.__name__, str(x.message)) for x in w], C().mode
    _same(torch, scenario)


def test_grad_mode_thread_local(torch):
    def scenario(lib):
        seen = []
        lib.set_grad_enabled(False)
        with lib.inference_mode():
            t = threading.Thread(target=lambda: seen.append(_modes(lib)))
            t.start()
            t.join()
            seen.append(_modes(lib))
        lib.set_grad_enabled(True)

        @lib.no_grad()
        def worker():
            seen.append(("worker", _modes(lib)))
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        seen.append(_modes(lib))
        return seen
    _same(torch, scenario)


def test_set_multithreading_enabled(torch):
    def scenario(lib):
        sm = lib.autograd.grad_mode.set_multithreading_enabled

        @sm(False)
        def f():
            return _modes(lib)
        with sm(False) as entered:
            inside = _modes(lib)
        return f(), entered, inside
    _same(torch, scenario)


def test_module_paths(torch):
    for name in ("no_grad", "enable_grad", "set_grad_enabled", "inference_mode"):
        assert getattr(ember.autograd.grad_mode, name) is getattr(ember, name)
        assert getattr(ember.autograd, name) is getattr(ember, name)
        assert getattr(torch.autograd.grad_mode, name) is getattr(torch, name)
