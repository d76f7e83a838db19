"""The op call's one fast path (``ops/_fast_path.py``'s ``_FastOp``, generated from the general
path) builds the same node as the general path (``Op.__call__``): same class, edges, metadata,
saved values, saved inputs with their versions, result and whether ``release`` frees anything,
and no field set by one and not the other, over ops and argument kinds. And the node's fast
backward (``OpNode.apply``'s ordinary branch) gives the general one's gradients."""
import numpy as np
import pytest

import ember
from ember.autograd import graph
from ember.autograd.node import OpNode
from ember.ops import registry

ONE_INPUT = ["exp", "tanh", "sigmoid", "neg", "abs", "sin", "log1p", "relu", "sqrt", "square"]
TWO_INPUTS = ["mul", "add", "sub", "div", "maximum", "atan2", "pow", "hypot"]
PARAMS = {"add": (1,), "sub": (1,)}  # alpha


def _op(name, n_in=None):
    op = next((o for o in registry.OPS if o.name == name and isinstance(o, registry._FastOp)
               and n_in in (None, o.n_in)), None)
    if op is None:
        pytest.skip(f"{name} is not a fast-path op")
    return op


def _arg(kind, shape=(3, 4)):
    """A fresh argument of the given kind (a new leaf each time, so two calls build alike)."""
    rng = np.random.default_rng(0)
    data = (rng.random(shape) + 0.5).astype(np.float32)
    if kind == "number":
        return 1.5
    if kind == "int":
        return 2
    if kind == "const":
        return ember.tensor(data)
    if kind == "leaf":
        return ember.tensor(data, requires_grad=True)
    if kind == "nonleaf":
        return ember.tensor(data, requires_grad=True) * 1
    if kind == "view":
        whole = np.concatenate([data[:1], data])
        return (ember.tensor(whole, requires_grad=True) * 1)[1:]
    if kind == "bcast":
        return ember.tensor(data[0], requires_grad=True)
    if kind == "double":
        return ember.tensor(data.astype(np.float64), requires_grad=True)
    raise AssertionError(kind)


def _same_value(x, y):
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        return (type(x) is type(y) and x.shape == y.shape and x.dtype == y.dtype
                and np.array_equal(x, y, equal_nan=True))
    return type(x) is type(y) and x == y


def _fields(node, args):
    """A node's fields, with tensors named by their position in ``args`` (two calls make
    different tensors and nodes: compare what they stand for)."""
    def name_tensor(t):
        for k, a in enumerate(args):
            if t is a:
                return ("arg", k)
        return ("other", tuple(t.shape))

    def name_fn(fn):
        if fn is None:
            return None
        if isinstance(fn, graph.AccumulateGrad):
            return ("acc", name_tensor(fn.variable))
        return type(fn).__name__

    return dict(
        cls=type(node),
        next_functions=tuple((name_fn(fn), nr) for fn, nr in node.next_functions),
        meta=tuple(node._meta),
        saved=node._saved,
        inputs=tuple((i, name_tensor(t), v) for i, t, v in node._inputs),
        ans=node._ans,
        frees=bool(node._frees),
        ans_vc=(None if node._ans is None else
                tuple(version for _, version in node._ans_vc)),
        packed=None if node._packed is None else [(i, u) for i, u, _ in node._packed],
        anomaly="traceback_" in node.__dict__.get("_metadata", {}),
    )


def _attributes(node):
    """The names of the fields set on ``node`` (slots and instance dict)."""
    slots = {n for c in type(node).__mro__ for n in getattr(c, "__slots__", ())}
    return {n for n in slots - {"__dict__", "__weakref__"} if hasattr(node, n)} | set(
        node.__dict__)


def _compare(op, args):
    fast = op(*args)
    general = registry.Op.__call__(op, *args)
    assert type(fast) is type(general)
    assert np.array_equal(fast._data, general._data, equal_nan=True)
    assert fast.requires_grad == general.requires_grad
    nf, ng = fast.grad_fn, general.grad_fn
    assert (nf is None) == (ng is None)
    if nf is None:
        return None
    assert isinstance(nf, OpNode)
    assert _attributes(nf) == _attributes(ng)
    f, g = _fields(nf, args), _fields(ng, args)
    for key in f:
        if key in ("saved", "ans"):
            continue
        assert f[key] == g[key], key
    assert len(nf._saved) == len(ng._saved)
    for x, y in zip(nf._saved, ng._saved):
        assert _same_value(x, y)
    assert _same_value(nf._ans, ng._ans)
    assert nf._seq != ng._seq  # (each numbered when made)
    return fast, general


def _check_backward(fast, general):
    """The two nodes give the same input gradients, by the fast and the general backward."""
    g = np.ones(fast.shape, dtype=fast._data.dtype)
    plain = fast.grad_fn.apply([g], False)
    recorded = general.grad_fn.apply([ember.tensor(g)], True)
    for x, y in zip(plain, recorded):
        assert (x is None) == (y is None)
        if x is not None:
            np.testing.assert_allclose(x, y._data, rtol=1e-6)


KINDS_ONE = ["leaf", "nonleaf", "view", "const", "double"]
KINDS_TWO = [("leaf", "leaf"), ("leaf", "const"), ("const", "leaf"), ("nonleaf", "view"),
             ("leaf", "number"), ("leaf", "int"), ("const", "const"), ("leaf", "bcast"),
             ("bcast", "leaf"), ("view", "number"), ("double", "double")]


@pytest.mark.parametrize("kind", KINDS_ONE)
@pytest.mark.parametrize("name", ONE_INPUT)
def test_one_input_nodes_equal(name, kind):
    op = _op(name, 1)
    args = (_arg(kind),)
    pair = _compare(op, args)
    if pair is not None:
        _check_backward(*pair)


@pytest.mark.parametrize("kinds", KINDS_TWO)
@pytest.mark.parametrize("name", TWO_INPUTS)
def test_two_input_nodes_equal(name, kinds):
    op = _op(name, 2)
    if name == "pow" and {"number", "int"} & set(kinds):
        pytest.skip("pow's tensor overload takes tensors only (numbers go to overload 0)")
    args = (*(_arg(k) for k in kinds), *PARAMS.get(name, ()))
    pair = _compare(op, args)
    if pair is not None:
        _check_backward(*pair)


def test_same_input_twice():
    op = _op("mul")
    a = _arg("leaf")
    _compare(op, (a, a))


def test_promoted_inputs_take_the_general_path_alike():
    op = _op("mul")
    args = (_arg("leaf"), ember.tensor(np.ones((3, 4), dtype=np.float64)))
    _compare(op, args)
    args = (ember.tensor([1, 2, 3]), 2.5)  # an int tensor and a float: promoted
    _compare(op, args)


def test_under_saved_tensor_hooks():
    op = _op("mul")
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        _compare(op, (_arg("leaf"), _arg("leaf")))
        _compare(op, (_arg("leaf"), 2.0))
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        _compare(_op("exp"), (_arg("leaf"),))


def test_under_anomaly_mode():
    with ember.autograd.detect_anomaly():
        nodes = _compare(_op("mul"), (_arg("leaf"), _arg("const")))
        assert nodes is not None
    with ember.autograd.set_detect_anomaly(True):
        _compare(_op("exp"), (_arg("nonleaf"),))


def test_no_grad_and_non_requiring_inputs_record_nothing():
    with ember.no_grad():
        assert _compare(_op("mul"), (_arg("leaf"), _arg("leaf"))) is None
    assert _compare(_op("exp"), (_arg("const"),)) is None
    assert _compare(_op("mul"), (_arg("const"), 3.0)) is None


def test_fast_backward_matches_after_release_and_versions():
    a, b = _arg("leaf"), _arg("leaf")
    y = a * b
    y.sum().backward()
    np.testing.assert_array_equal(a.grad._data, b._data)
    with pytest.raises(RuntimeError):
        y.grad_fn.apply([np.ones((3, 4), np.float32)], False)  # freed: PyTorch's error
    c = _arg("leaf")
    d = c.exp()
    with ember.no_grad():
        d.add_(1)  # exp saved its result: the version check fails
    with pytest.raises(RuntimeError):
        d.sum().backward()


@pytest.mark.parametrize("n_in", [1, 2, 3])
def test_the_fast_call_runs_the_general_node_code_inline(n_in):
    """Generated from the general path: the node, its edges and its result are made by the
    bodies of ``Op._node``, ``_edge`` and ``_result``, inlined, not by calls to them."""
    call = type(_op({1: "exp", 2: "mul", 3: "addmm"}[n_in], n_in)).__call__
    names = set(call.__code__.co_names)
    assert not names & {"_node", "_edge", "_result"}
    assert {"next_functions", "_seq", "_meta", "_saved", "_inputs", "_ans", "_frees",
            "_ans_vc", "accumulate_grad_of"} <= names


# Three inputs: addmm (a Linear's bias, input and transposed weight), addcmul, lerp, clamp.
KINDS_THREE = [("leaf", "leaf", "leaf"), ("const", "leaf", "const"), ("const", "const", "leaf"),
               ("leaf", "const", "const"), ("nonleaf", "view", "leaf"), ("bcast", "leaf", "leaf"),
               ("const", "const", "const"), ("double", "double", "double"),
               ("leaf", "number", "leaf"), ("leaf", "leaf", "double")]


def _three(name, kinds):
    a, b, c = (_arg(k) for k in kinds)
    if name == "addmm":  # (3, 4) = (3, 4) + (3, 4) @ (4, 4)
        if len({k == "double" for k in kinds}) > 1:
            pytest.skip("addmm's public function refuses mixed dtypes before the op")
        c = _arg(kinds[2], (4, 4)) if kinds[2] != "bcast" else c
        return (a, b, c, 1, 1, (False, False))
    if name == "addcmul":
        return (a, b, c, 0.5)
    return (a, b, c)


@pytest.mark.parametrize("kinds", KINDS_THREE)
@pytest.mark.parametrize("name", ["addmm", "addcmul", "lerp", "clamp"])
def test_three_input_nodes_equal(name, kinds):
    op = _op(name, 3)
    args = _three(name, kinds)
    try:
        registry.Op.__call__(op, *args)
    except Exception as exc:  # refused alike by both calls (addmm of a number, mixed dtypes)
        with pytest.raises(type(exc)):
            op(*args)
        return
    pair = _compare(op, args)
    if pair is not None:
        _check_backward(*pair)


def test_three_inputs_under_hooks_and_anomaly_mode():
    op = _op("addcmul", 3)
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        _compare(op, _three("addcmul", ("leaf", "leaf", "const")))
    with ember.autograd.detect_anomaly():
        assert _compare(op, _three("addcmul", ("leaf", "const", "leaf"))) is not None
    with ember.no_grad():
        assert _compare(op, _three("addcmul", ("leaf", "leaf", "leaf"))) is None


def test_linear_takes_the_fast_call_and_matches_pytorch(torch):
    rng = np.random.default_rng(1)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((5, 3), (4, 3), (4,)))
    grads = []
    for L in (ember, torch):
        xs, ws, bs = (L.tensor(v, requires_grad=True) for v in (x, w, b))
        y = L.nn.functional.linear(xs, ws, bs)
        assert type(y.grad_fn).__name__ == "AddmmBackward0"
        (y * y).sum().backward()
        grads.append([y.detach().numpy(), *(t.grad.numpy() for t in (xs, ws, bs))])
    for e, t in zip(*grads):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)
