"""The fuzzer's random programs under ``torch.compile``: each program's op and backward lines
become one function of its leaves, called three times on new leaf values eagerly and compiled;
every name the function defines, every leaf's ``.grad`` and the result equal byte for byte.
(The generator needs PyTorch as its shape oracle, so this skips without it.)"""
import textwrap

import numpy as np
import pytest

pytest.importorskip("torch")

import ember  # noqa: E402

from .generator import generate  # noqa: E402

SEEDS = range(300)
REPLAYED_AT_LEAST = 145  # programs of SEEDS that replay (152 do at the last raise)
_replayed = []


def _function(program, wrap=None):
    """``fn(a0, a1, ...)`` running the program's non-leaf lines, returning every name (as
    ``wrap`` returns their list, where given)."""
    leaves = [s.defines for s in program.stmts if s.stage == "leaf"]
    body = [s.code for s in program.stmts if s.stage != "leaf"]
    names = list(dict.fromkeys(s.defines for s in program.stmts
                               if s.stage != "leaf" and s.defines))
    result = f"[{', '.join(names)}]"
    source = (f"def fn({', '.join(leaves)}):\n"
              + textwrap.indent("\n".join(body) or "pass", "    ")
              + f"\n    return {'_wrap(' + result + ')' if wrap else result}\n")
    namespace = {"torch": ember, "np": np, "_wrap": wrap}
    exec(compile(source, "<fuzz program>", "exec"), namespace)  # noqa: S102 (our program)
    leaf_ns = {"torch": ember, "np": np}
    for s in program.stmts:
        if s.stage == "leaf":
            exec(s.code, leaf_ns)  # noqa: S102
    return namespace["fn"], [leaf_ns[n] for n in leaves]


def _fresh(leaves, k):
    """The leaves with new values (k-th call), as new tensors with the same flags."""
    out = []
    for t in leaves:
        data = t.detach().clone()
        if data.is_floating_point() and k:
            data = data + 0.125 * k
        out.append(data.requires_grad_(t.requires_grad))
    return out


def _same(a, b):
    if isinstance(a, ember.Tensor):
        assert isinstance(b, ember.Tensor)
        x, y = np.asarray(a._data), np.asarray(b._data)
        assert (x.dtype, x.shape, x.tobytes()) == (y.dtype, y.shape, y.tobytes())
        assert a.requires_grad == b.requires_grad
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
    else:
        assert a == b or (a != a and b != b)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_program_compiled_equals_eager(seed):
    fn, leaves = _function(generate(seed))
    compiled = ember.compile(fn)
    for k in range(3):
        eager_leaves, compiled_leaves = _fresh(leaves, k), _fresh(leaves, k)
        try:
            want = fn(*eager_leaves)
        except Exception as exc:
            with pytest.raises(type(exc)):
                compiled(*compiled_leaves)
            return
        got = compiled(*compiled_leaves)
        _same(want, got)
        _same([t.grad for t in eager_leaves], [t.grad for t in compiled_leaves])
    if compiled._ember_runner.replays:
        _replayed.append(seed)


def test_the_number_of_programs_that_replay_only_goes_up():
    if not _replayed:
        pytest.skip("the programs did not run in this session")
    assert len(_replayed) >= REPLAYED_AT_LEAST
