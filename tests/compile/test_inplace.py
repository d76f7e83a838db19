"""Buffer reuse by liveness (``ember/_dynamo/inplace.py``): where a replay writes a result
into a dying operand, and where it must not."""
import numpy as np

import ember as torch
from tests.compile.common import chain_twins


def replayed(fn, *args, calls=3):
    """``fn`` compiled, called ``calls`` times on ``args``; its outputs and the replay's code."""
    compiled = torch.compile(fn)
    outs = [compiled(*args) for _ in range(calls)]
    runner = compiled._ember_runner
    assert runner.replays >= 1, runner.reasons
    source = [r.replay for r in runner.recordings.values() if r.replay][-1].source
    return outs, source


def same(a, b):
    a = a.detach().numpy() if isinstance(a, torch.Tensor) else a
    b = b.detach().numpy() if isinstance(b, torch.Tensor) else b
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_a_dying_operand_takes_the_result_and_the_gradients_are_eagers():
    def chain(x, w):
        y = x
        for _ in range(4):
            y = y * w + x  # (x's gradient: a sum of four arriving gradients)
        return y * y

    x0 = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    source = chain_twins(x0, chain)
    assert " += " in source or "out=" in source


def test_an_operand_read_later_or_returned_keeps_its_values():
    x = torch.arange(6.0).reshape(2, 3)

    def f(x):
        a = x * 2
        b = a + 1  # a is read again below: not reused
        c = a * b
        d = c - 1  # c is returned: not reused
        return c, d

    outs, source = replayed(f, x)
    for c, d in outs:
        want_c = (x * 2) * (x * 2 + 1)
        assert same(c, want_c) and same(d, want_c - 1)


def test_a_view_of_the_operand_alive_later_blocks_the_reuse():
    x = torch.arange(6.0).reshape(2, 3)

    def f(x):
        a = x * 2
        v = a.t()  # shares a's memory
        b = a + 1  # a dies here, but v lives on
        return b, v * 1

    outs, source = replayed(f, x)
    for b, v in outs:
        assert same(b, x * 2 + 1) and same(v, (x * 2).t() * 1)


def test_an_argument_and_a_gradient_are_never_written():
    x = torch.arange(4.0, requires_grad=True)
    w = torch.ones(4, requires_grad=True)
    before = x.detach().clone()

    def step():
        x.grad = w.grad = None
        loss = ((x * w) * 3).sum()
        loss.backward()
        g = x.grad * 2 + 1  # the stored gradient's array, dying here: not reused
        return loss, g

    outs, _ = replayed(step)
    assert same(x.detach(), before)
    for _, g in outs:
        assert same(g, torch.full((4,), 7.0)) and same(x.grad, torch.full((4,), 3.0))

