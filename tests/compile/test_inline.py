"""Inlining recorded calls (``ember/_dynamo/inline.py``): which functions are written out, and
that the written-out expression is the call's."""
import numpy as np
import pytest

import ember as torch
from ember import _xp
from ember._dynamo.inline import expression
from ember.ops.operands import _opmath
from tests.compile.common import chain_twins

LIST = [1, 2]
SCALE = 3


class Consts:
    """A recorder's constants, as ``expression`` asks for them."""

    def __init__(self):
        self.items = []

    def __call__(self, obj):
        for k, x in enumerate(self.items):
            if x is obj:
                return f"c{k}"
        self.items.append(obj)
        return f"c{len(self.items) - 1}"

    def lookup(self, name):
        k = int(name[1:]) if name[:1] == "c" and name[1:].isdigit() else -1
        return self.items[k] if 0 <= k < len(self.items) else None

    def run(self, source, **slots):
        return eval(source, {f"c{k}": x for k, x in enumerate(self.items)}, slots)


def written(fn, *args):
    consts = Consts()
    return consts, expression(fn, list(args), consts, consts.lookup)


def test_a_lambda_of_operators_is_its_expression():
    consts, src = written(lambda xp, g, ans, a, b: g * b, "c9", "s0", "s1", "s2", "s3")
    assert src == "s0 * s3"


def test_xp_functions_become_constants_and_the_result_is_the_calls():
    consts = Consts()
    xp = consts(_xp.NUMPY)
    src = expression(lambda xp, a, b: xp.multiply(xp.exp(a), b), [xp, "s0", "s1"], consts,
                     consts.lookup)
    assert "xp" not in src and src.count("(") == 2
    a, b = np.float32([0.5, -1, 2]), np.float32([3, 4, 5])
    got = consts.run(src, s0=a, s1=b)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.multiply(np.exp(a), b))


def _scaled(xp, g, alpha):
    """A def of one return, after its docstring."""
    return g if alpha == 1 else g * alpha


def test_a_def_of_one_return_with_a_test_on_literals_is_decided():
    assert written(_scaled, "c0", "s0", "1")[1] == "s0"
    assert written(_scaled, "c0", "s0", "2.5")[1] == "s0 * 2.5"
    # a test on a slot's value stays a test
    assert written(_scaled, "c0", "s0", "s1")[1] == "s0 if s1 == 1 else s0 * s1"


def _two_statements(xp, g):
    out = g * 2
    return out


def _reads_a_list(xp, g):
    return g * LIST[0]


def _reads_a_number(xp, g):
    return g * SCALE


def test_what_is_left_a_call():
    assert written(_two_statements, "c0", "s0")[1] is None
    assert written(_reads_a_list, "c0", "s0")[1] is None  # (a list may change)
    assert written(lambda xp, *gs: gs[0], "c0", "s0")[1] is None  # (*args)
    assert written(lambda xp, g: [g for _ in range(2)], "c0", "s0")[1] is None  # (a scope)
    assert written(np.add, "s0", "s1")[1] is None  # (not a Python function)


def test_a_number_global_is_a_constant():
    consts, src = written(_reads_a_number, "c9", "s0")
    assert consts.run(src, s0=np.float32([2])) == 6


def test_an_expression_argument_read_twice_is_left_a_call():
    square = lambda xp, a: a * a  # noqa: E731
    assert written(square, "c0", "s0")[1] == "s0 * s0"
    assert written(square, "c0", "s0 + s1")[1] is None
    assert written(lambda xp, a: -a, "c0", "s0 + s1")[1] == "-(s0 + s1)"


def test_two_lambdas_alike_on_one_line_are_told_apart_by_their_columns():
    f, g = (lambda xp, a: a + 1), (lambda xp, a: a - 1)
    assert written(f, "c0", "s0")[1] == "s0 + 1" and written(g, "c0", "s0")[1] == "s0 - 1"


@pytest.mark.parametrize("kind", ["mul/add", "exp/tanh"])
def test_a_compiled_chain_replays_inlined_and_equals_eager(kind):
    def chain(x, w):
        y = x
        for _ in range(3):
            y = (y * w + x) if kind == "mul/add" else torch.exp(torch.tanh(y * w) + x)
        return y

    x0 = np.random.default_rng(0).standard_normal(5).astype(np.float32)
    source = chain_twins(x0, chain)
    assert " * " in source  # (mul's forward and rules written out, not called)


def test_a_wrapper_resolves_to_the_function_it_calls_for_these_arguments():
    """``_opmath`` of arrays that are not half calls its function; a blockwise kernel of
    arrays it runs whole is its block kernel: the replay calls those directly."""
    from ember.ops import _blocks
    from ember.ops.unary import _sigmoid_blocks, _sigmoid_raw

    small, big = np.zeros(8, np.float32), np.zeros(_blocks._BLOCK + 1, np.float32)
    for array, kernel in ((small, _sigmoid_raw), (big, _sigmoid_blocks),
                          (small.astype(np.float16), None)):
        consts = Consts()
        slots = {"s0": array}
        src = expression(lambda xp, input: _opmath(xp, _sigmoid_blocks, input),
                         [consts(_xp.NUMPY), "s0"], consts,
                         lambda name: slots.get(name, consts.lookup(name)))
        called = consts.lookup(src.split("(")[0])
        assert called is (kernel or _opmath), src
        x = np.linspace(-3, 3, array.size).astype(array.dtype)
        got = consts.run(src, s0=x)
        assert got.tobytes() == _opmath(_xp.NUMPY, _sigmoid_blocks, x).tobytes()

