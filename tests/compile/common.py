"""Helpers the compiled-mode tests share: byte-for-byte comparison of results, and a chain of
elementwise ops on two leaves run eagerly and compiled."""
import numpy as np

import ember


def array_bytes(t):
    a = np.asarray(t._data)
    return a.dtype, a.shape, a.tobytes()


def same(a, b):
    """``a`` and ``b`` (results of one call) equal byte for byte, structure alike."""
    if isinstance(a, ember.Tensor):
        assert isinstance(b, ember.Tensor) and array_bytes(a) == array_bytes(b)
        assert a.requires_grad == b.requires_grad
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            same(a[k], b[k])
    else:
        assert a == b


def chain_twins(x0, chain, calls=3):
    """``loss = chain(y, x, w).sum()`` and its backward, on leaves ``x = x0`` and ``w = x0``
    reversed, run ``calls`` times eagerly and compiled: asserts each call's loss and
    gradients equal byte for byte; returns the replay's source."""
    def run(compiled):
        x = ember.tensor(x0, requires_grad=True)
        w = ember.tensor(x0[::-1].copy(), requires_grad=True)

        def step():
            x.grad = w.grad = None
            loss = chain(x, w).sum()
            loss.backward()
            return loss

        fn = ember.compile(step) if compiled else step
        outs = [(fn().detach(), x.grad.clone(), w.grad.clone()) for _ in range(calls)]
        return fn, outs

    fn, got = run(True)
    _, want = run(False)
    same(got, want)
    runner = fn._ember_runner
    assert runner.replays >= 1, runner.reasons
    return [r.replay for r in runner.recordings.values() if r.replay][-1].source
