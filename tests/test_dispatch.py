"""The dispatch stack (``ember/_dispatch.py``): one flag says whether any interposer is active,
it follows each mode, and a new interposer (a tracer, say) plugs in as one more layer."""
import ember
from ember import _dispatch


def test_flag_follows_each_mode():
    assert not _dispatch.state.active
    with ember.autocast("cpu"):
        assert _dispatch.state.active
    assert not _dispatch.state.active
    with ember.autograd.forward_ad.dual_level():
        assert _dispatch.state.active
    assert not _dispatch.state.active
    with ember.autograd.detect_anomaly(check_nan=True):
        assert not _dispatch.state.active  # (the backward check is no interposer)
    assert not _dispatch.state.active
    seen = []
    ember.func.vmap(lambda t: seen.append(_dispatch.state.active) or t * 2)(ember.ones(2, 3))
    assert seen == [True] and not _dispatch.state.active


def test_stack_order():
    names = [i.name for i in _dispatch._stack]
    assert names == ["autocast", "vmap", "forward AD", "anomaly", "record"]


def test_a_tracer_plugs_in_as_one_more_interposer():
    trace = []
    on = [True]

    def call(op, args, proceed):
        result = proceed(args)
        trace.append((op.name, tuple(result.shape)))
        return result

    tracer = _dispatch.register(_dispatch.Interposer("tracer", 50, lambda: on[0], call))
    try:
        x = ember.ones(2, 3, requires_grad=True)
        y = (x * 2).exp().sum()
        y.backward()
        assert [name for name, _ in trace] == ["mul", "exp", "sum"]
        assert x.grad is not None
        on[0] = False
        _dispatch.refresh()
        assert not _dispatch.state.active
        (x * 3).sum()
        assert len(trace) == 3
    finally:
        _dispatch._stack.remove(tracer)
        _dispatch.refresh()
    assert not _dispatch.state.active
