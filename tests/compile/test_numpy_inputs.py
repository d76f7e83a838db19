"""Tensors made from NumPy arrays inside a compiled function (``torch.tensor(a)``,
``torch.from_numpy(a)``, ``torch.as_tensor(a)``): each replay makes them again from the array
as it is at that call, where the array is one the call can find again (an argument, a global,
a closure's); an array made inside the call stops the recording (its values could differ)."""
import numpy as np

import ember as torch

MASK = np.array([True, False, True, True])


def _bytes(t):
    return t.detach().numpy().tobytes()


def test_arrays_from_arguments_globals_and_closures_are_read_at_each_call():
    buf = np.zeros(4, np.float32)

    def run(compiled):
        w = torch.ones(4, requires_grad=True)

        def step(batch):
            x = torch.tensor(batch)  # a copy of the argument
            m = torch.tensor(MASK)  # a global's
            s = torch.from_numpy(buf)  # the closure's array itself
            loss = torch.where(m, x * w, torch.as_tensor(s)).sum()
            loss.backward()
            return loss

        fn = torch.compile(step) if compiled else step
        arg = np.arange(4, dtype=np.float32)
        outs = []
        for i in range(5):
            arg[:] = i  # (the same array, its values new)
            buf[:] = 10 * i
            MASK[0] = bool(i % 2)
            w.grad = None
            outs.append((_bytes(fn(arg)), _bytes(w.grad)))
        MASK[0] = True
        return fn, outs

    fn, got = run(True)
    _, want = run(False)
    assert got == want
    assert fn._ember_runner.replays >= 3, fn._ember_runner.reasons


def test_from_numpy_shares_memory_in_the_replay_too():
    buf = np.ones(3)
    w = torch.tensor([1.0, 2.0, 3.0])

    @torch.compile
    def scale():
        torch.from_numpy(buf).mul_(w)  # writes show in the array

    for _ in range(3):
        scale()
    assert buf.tolist() == [1.0, 8.0, 27.0]
    assert scale._ember_runner.replays == 2


def test_an_array_made_inside_the_call_stops_the_recording():
    w = torch.ones(3)

    @torch.compile
    def f():
        return torch.tensor(np.random.default_rng().standard_normal(3)) * w

    draws = [f() for _ in range(3)]
    assert f._ember_runner.replays == 0
    assert not torch.equal(draws[1], draws[2])  # (a new draw each call: run eagerly)
    assert "neither an argument nor reached" in next(iter(f._ember_runner.reasons.values()))


def test_a_new_array_argument_is_a_new_guard():
    w = torch.ones(2)

    @torch.compile
    def f(a):
        return torch.tensor(a) + w

    a, b = np.zeros(2), np.ones(2)
    assert f(a).tolist() == [1, 1] and f(b).tolist() == [2, 2] and f(a).tolist() == [1, 1]
    assert len(f._ember_runner.entries) == 2 and f._ember_runner.replays == 1
