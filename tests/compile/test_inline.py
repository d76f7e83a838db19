"""Inlining recorded calls (``ember/_dynamo/inline.py``): which functions are written out, and
that the written-out expression is the call's."""
import warnings

import numpy as np
import pytest

import ember as torch
from ember import _xp
from ember._dynamo.inline import expression, statement
from ember.ops.operands import _opmath
from ember.ops.unary import _numpy_pair  # (marked ``on_metadata``)
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



# --------------------------------------------------------------------------- whole functions


def block(fn, args, **slots):
    """``fn(*args)`` written out as a line's whole value (statements allowed), the slots
    standing for ``slots``' arrays; returns (constants, source)."""
    consts = Consts()
    args = [consts(a) if not isinstance(a, str) else a for a in args]
    src = expression(fn, args, consts, lambda name: slots.get(name, consts.lookup(name)),
                     block=True)
    return consts, src


def run_block(consts, src, target="s9", **slots):
    """Run ``target = src`` (``statement``) in a namespace of the constants and slots."""
    namespace = {f"c{k}": x for k, x in enumerate(consts.items)} | slots
    exec(statement(target, src), namespace)  # (our generated code)
    return namespace


def _buffered(xp, g, ans):
    """Several statements: a result built in one buffer (as the rules of tanh, sigmoid)."""
    out = xp.subtract(_xp.constant(1, ans.dtype), ans)
    out *= g
    out *= ans
    return out


def test_a_function_of_several_statements_is_written_out_as_a_lines_whole_value():
    g, ans = np.float32([0.5, -2, 3]), np.float32([0.25, 0.5, 0.75])
    assert written(_buffered, "c0", "s0", "s1")[1] is None  # (not inside an expression)
    consts, src = block(_buffered, [_xp.NUMPY, "s0", "s1"], s0=g, s1=ans)
    code = statement("s9", src)
    # its local is the line's slot; the cached constant 1 is decided when recorded
    first, *rest = code.splitlines()
    assert rest == ["s9 *= s0", "s9 *= s1"] and first.endswith(" - s1"), code
    assert consts.lookup(first.split()[2]) is _xp.constant(1, ans.dtype)
    got = run_block(consts, src, s0=g, s1=ans)["s9"]
    assert got.tobytes() == _buffered(_xp.NUMPY, g, ans).tobytes()


def _branches(xp, g, ans):
    if g.ndim == 0 or type(g) is not np.ndarray:
        return g * ans
    if _numpy_pair(g, ans):
        return _buffered(xp, g, ans)
    return g * (1 - ans)


def test_tests_on_the_arguments_types_shapes_and_dtypes_are_decided_when_recorded():
    g, ans = np.float32([0.5, -2, 3]), np.float32([0.25, 0.5, 0.75])
    consts, src = block(_branches, [_xp.NUMPY, "s0", "s1"], s0=g, s1=ans)
    assert len(statement("s9", src).splitlines()) == 3  # (the pair's branch: _buffered's)
    assert run_block(consts, src, s0=g, s1=ans)["s9"].tobytes() == \
        _buffered(_xp.NUMPY, g, ans).tobytes()
    wide = ans.astype(np.float64)  # (not a pair: the last branch)
    consts, src = block(_branches, [_xp.NUMPY, "s0", "s1"], s0=g, s1=wide)
    assert statement("s9", src) == "s9 = s0 * (1 - s1)"


def _reads_values(xp, g):
    if g[0] > 0:  # (a test on the array's values: not the recording's to decide)
        return g
    return -g


def _writes_an_item(xp, g):
    out = g.copy()
    out[0] = 1
    return out


def _recursive(xp, g):
    out = _recursive(xp, g)  # (recording stops writing it out: the call stays)
    return out


def test_a_function_whose_statements_cannot_be_decided_or_written_is_left_a_call():
    g = np.float32([1, 2])
    assert block(_reads_values, [_xp.NUMPY, "s0"], s0=g)[1] is None
    assert block(_writes_an_item, [_xp.NUMPY, "s0"], s0=g)[1] is None
    consts, src = block(_recursive, [_xp.NUMPY, "s0"], s0=g)  # (a few deep, then a call)
    assert src.count("\n") <= 6 and consts.lookup(src.split("(")[0].split()[-1]) is _recursive
    # the slot's facts are not known (no array recorded for it): the test stays undecided
    assert block(_branches, [_xp.NUMPY, "s0", "s1"])[1] is None


def _scaled_product(xp, a, b, alpha):
    product = xp.matmul(a, b)
    product = _scaled(xp, product, alpha)
    return product


def test_argument_expressions_are_computed_first_in_order_and_once():
    a, b = np.float32([[1, 2], [3, 4]]), np.float32([[0.5, 1], [2, 4]])
    consts, src = block(_scaled_product, [_xp.NUMPY, "s0.T", "s1", "1"], s0=a, s1=b)
    lines = statement("s9", src).splitlines()
    assert lines[0] == "_l0 = s0.T" and lines[-1].startswith("del ")
    assert "@" in src  # (matmul on an array argument: its operator)
    got = run_block(consts, src, s0=a, s1=b)
    assert got["s9"].tobytes() == (a.T @ b).tobytes() and "_l0" not in got
    consts, src = block(_scaled_product, [_xp.NUMPY, "s0", "s1", "2.5"], s0=a, s1=b)
    assert run_block(consts, src, s0=a, s1=b)["s9"].tobytes() == ((a @ b) * 2.5).tobytes()


def test_a_ufunc_call_is_its_operator_only_on_an_ndarray():
    slots = {"s0": np.float32([1, 2]), "s1": np.float32(3)}  # (a NumPy scalar: left a call)
    for left, want in (("s0", "s0 * s2"), ("s1", None)):
        consts = Consts()
        src = expression(lambda xp, a, b: xp.multiply(a, b), [consts(_xp.NUMPY), left, "s2"],
                         consts, lambda name: slots.get(name, consts.lookup(name)))
        assert src == (want or f"c1({left}, s2)")


def _random_test(rng, depth=0):
    """A random Python expression over literals and two arrays' facts (``s0``, ``s1``)."""
    leaves = ["None", "0", "1", "2", "()", "(1, 2)", "True", "False", "s0.ndim", "s1.shape",
              "s0.shape[0]", "s1.dtype", "s0.T.strides", "type(s0)", "len(s1.shape)",
              "c0", "s0.size"]
    if depth > 2 or rng.random() < 0.3:
        return str(rng.choice(leaves))
    a, b = _random_test(rng, depth + 1), _random_test(rng, depth + 1)
    form = rng.integers(7)
    if form == 0:
        return f"({a} {rng.choice(['and', 'or'])} {b})"
    if form == 1:
        return f"({a} {rng.choice(['==', '!=', '<', '>=', 'is', 'is not', 'in'])} {b})"
    if form == 2:
        return f"(not {a})"
    if form == 3:
        return f"({a} {rng.choice(['+', '-', '*', '//'])} {b})"
    if form == 4:
        return f"({a} if {_random_test(rng, depth + 1)} else {b})"
    if form == 5:
        return f"_numpy_pair(s0, {rng.choice(['s0', 's1'])})"
    return f"({a}, {b})"


@pytest.mark.parametrize("seed", range(20))
def test_a_decided_test_is_what_python_computes(seed):
    """``_known`` against Python on random expressions: where it decides, Python's value
    (``and``/``or`` give an operand, not a bool); where Python raises, it does not decide."""
    import ast

    from ember._dynamo.inline import _UNKNOWN, _known
    rng = np.random.default_rng(seed)
    slots = {"s0": np.zeros((3, 2), np.float32), "s1": np.ones(4, np.float64),
             "c0": np.dtype(np.float32)}
    decided = 0
    for _ in range(300):
        src = _random_test(rng)
        got = _known(ast.parse(src, mode="eval").body, slots.get)
        try:
            with warnings.catch_warnings():  # ("is" with a literal)
                warnings.simplefilter("ignore", SyntaxWarning)
                want = eval(src, {"_numpy_pair": _numpy_pair}, dict(slots))  # (ours)
        except Exception:
            assert got is _UNKNOWN, src
            continue
        if got is not _UNKNOWN:
            decided += 1
            assert type(got) is type(want) and got == want, src
    assert decided > 50
