"""Writes a compiled function makes outside an op's result, which a replay must make too or
refuse: ``out=`` tensors, a tensor given a new shape in place, a returned view whose base was
written in place. Each case equals eager call for call (found by the fuzzer and by hand: a
replay once skipped an ``out=`` write, silently)."""
import numpy as np

import ember as torch
from tests.compile.common import same


def test_an_out_argument_is_written_by_each_replay():
    def f(x, out):
        torch.add(x, 1, out=out)
        return out * 2

    compiled = torch.compile(f)
    for k in range(4):
        x = torch.arange(3.0) + k
        o1, o2 = torch.zeros(3), torch.zeros(3)
        same(f(x, o1), compiled(x, o2))
        same(o1, o2)
        assert o1._version == o2._version
    assert compiled._ember_runner.replays >= 2, compiled._ember_runner.reasons


def test_an_out_tensor_made_inside_the_call_is_written_by_each_replay():
    def g(x):
        out = torch.empty(3)
        torch.mul(x, 3, out=out)
        return out + 1

    compiled = torch.compile(g)
    for k in range(4):
        x = torch.arange(3.0) + k
        same(g(x), compiled(x))
    assert compiled._ember_runner.replays >= 2, compiled._ember_runner.reasons


def test_a_resized_out_argument_runs_eagerly():
    def f(x, out):
        torch.add(x, 1, out=out)  # (out resized, with PyTorch's warning)
        return out

    compiled = torch.compile(f)
    for k in range(3):
        x = torch.arange(3.0) + k
        o1, o2 = torch.zeros(0), torch.zeros(0)
        same(f(x, o1), compiled(x, o2))
    assert compiled._ember_runner.replays == 0
    assert "resized" in next(iter(compiled._ember_runner.reasons.values()))


def test_an_argument_given_a_new_shape_in_place_runs_eagerly():
    def f(a):
        a.squeeze_()
        return a.exp()

    compiled = torch.compile(f)
    for k in range(3):
        a0 = np.arange(4.0).reshape(4, 1, 1) + k
        a1, a2 = torch.tensor(a0), torch.tensor(a0)
        same(f(a1), compiled(a2))
        assert a1.shape == a2.shape == (4,)
    assert compiled._ember_runner.replays == 0


def test_a_tensor_made_inside_the_call_reshaped_in_place_replays():
    def f(a):
        b = a * 2
        b.unsqueeze_(0).t_()
        return b + 1

    compiled = torch.compile(f)
    for k in range(3):
        a = torch.arange(3.0) + k
        same(f(a), compiled(a))
    assert compiled._ember_runner.replays == 2, compiled._ember_runner.reasons


def test_a_returned_view_of_a_base_written_in_place_runs_eagerly():
    def f(a):
        t = a.sum(dim=1, keepdim=True)
        parts = t.chunk(1, 1)
        t.fill_(5)  # (parts[0]'s graph is refused now: only a backward through it raises)
        return [t, parts]

    compiled = torch.compile(f)
    for _ in range(3):
        a1, a2 = (torch.ones(2, 3, requires_grad=True) for _ in range(2))
        want, got = f(a1), compiled(a2)
        same(want[0], got[0])
        assert got[1][0].tolist() == want[1][0].tolist()
    assert compiled._ember_runner.replays == 0
