"""Every op of the spec tables under ``torch.compile``: each spec's forward and a backward
compiled together, and each spec's forward compiled with the backward run outside (the
compiled forward's recorded backward), called on new inputs of the same shapes, equal eager
byte for byte (values and gradients). A spec whose call cannot be recorded runs eagerly
(equal by construction); how many replay is counted, and may only go up
(``REPLAYED_AT_LEAST``)."""
import numpy as np
import pytest

import ember
from tests.opspec import inputs

from ..ops.test_core_ops import all_specs

SPECS = all_specs()
REPLAYED_AT_LEAST = 0.85  # the share of specs that replay (968 of 1126; raise it as it grows)
REPLAYED_OUTSIDE_AT_LEAST = 0.85  # (968 of 1126)
_replayed = []
_replayed_outside = []


def _outputs(result):
    return result if isinstance(result, tuple) else (result,)


def _step(spec):
    """The spec's forward, then a backward of a weighted sum of its float outputs into the
    inputs' ``.grad``; returns the outputs and the gradients."""
    def step(*xs):
        for x in xs:
            x.grad = None
        outs = _outputs(spec.fn(ember, *xs))
        diff = [o for o in outs if isinstance(o, ember.Tensor) and o.requires_grad]
        if diff:
            total = sum(((o * (k + 1)).sum() for k, o in enumerate(diff)), start=0)
            if isinstance(total, ember.Tensor) and total.requires_grad:
                total.backward()
        return outs, [x.grad for x in xs]
    return step


def _same(a, b):
    if isinstance(a, ember.Tensor):
        assert isinstance(b, ember.Tensor)
        x, y = np.asarray(a._data), np.asarray(b._data)
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
    else:
        assert a == b or (a != a and b != b)


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_compiled_spec_equals_eager_bitwise(spec):
    shapes = spec.shapes[0]
    step = _step(spec)
    compiled = ember.compile(step)
    for seed in range(3):
        try:
            want = step(*inputs(ember, spec, shapes, ember.float32, seed))
        except Exception as exc:  # (the spec's op refuses float32: nothing to compare)
            pytest.skip(f"eager raises in float32: {exc!r}")
        got = compiled(*inputs(ember, spec, shapes, ember.float32, seed))
        _same(want, got)
    runner = compiled._ember_runner
    _replayed.append(runner.replays > 0)


def _backward_outside(spec, run, xs):
    """``run`` (the spec's forward, eager or compiled) on ``xs``, then the backward here."""
    outs = _outputs(run(*xs))
    diff = [o for o in outs if isinstance(o, ember.Tensor) and o.requires_grad]
    if diff:
        total = sum(((o * (k + 1)).sum() for k, o in enumerate(diff)), start=0)
        if isinstance(total, ember.Tensor) and total.requires_grad:
            total.backward()
    return list(outs), [x.grad for x in xs]


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_compiled_forward_with_backward_outside_equals_eager_bitwise(spec):
    shapes = spec.shapes[0]

    def forward(*xs):
        return spec.fn(ember, *xs)
    compiled = ember.compile(forward)
    for seed in range(3):
        try:
            want = _backward_outside(spec, forward, inputs(ember, spec, shapes, ember.float32,
                                                           seed))
        except Exception as exc:  # (the spec's op refuses float32: nothing to compare)
            pytest.skip(f"eager raises in float32: {exc!r}")
        got = _backward_outside(spec, compiled, inputs(ember, spec, shapes, ember.float32,
                                                        seed))
        _same(want, got)
    _replayed_outside.append(compiled._ember_runner.replays > 0)


@pytest.mark.parametrize("replayed, at_least", [(_replayed, REPLAYED_AT_LEAST),
                                                (_replayed_outside, REPLAYED_OUTSIDE_AT_LEAST)],
                         ids=["backward inside", "backward outside"])
def test_the_share_of_specs_that_replay_only_goes_up(replayed, at_least):
    if len(replayed) < len(SPECS) // 2:
        pytest.skip("the spec tests did not run in this session")
    share = sum(replayed) / len(replayed)
    print(f"{sum(replayed)} of {len(replayed)} specs replay ({share:.0%})")
    assert share >= at_least
