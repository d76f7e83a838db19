"""``ops/_between_rules.py``: the value one derivative rule of a node leaves for the next.

A value is read only under its own key (objects compared by identity, never by value), at most
once where the taker is the last, and never by rules recorded under ``create_graph``; a stale
value (another backward's) is let go by the first ``take`` that meets it.
"""
from __future__ import annotations

import numpy as np

import ember
from ember import _array_api
from ember.ops import _between_rules as between


def test_a_value_is_taken_under_its_own_key_only():
    holder = {}
    g, other = np.ones(3), np.ones(3)  # equal values, different objects
    between.leave(np, holder, (g,), "value")
    assert between.take(np, holder, (g,), last=False) == "value"
    assert between.take(np, holder, (g,)) == "value"  # the last taker ends it
    assert holder == {} and between.take(np, holder, (g,)) is None
    between.leave(np, holder, (g,), "value")
    assert between.take(np, holder, (other,)) is None  # equal is not the same
    assert holder == {}  # (and the stale value is let go)


def test_keys_of_several_objects_and_of_other_lengths():
    holder = {}
    ans, g = object(), object()
    between.leave(np, holder, (ans, g), 1)
    assert between.take(np, holder, (g, ans)) is None
    between.leave(np, holder, (ans, g), 2)
    assert between.take(np, holder, (ans,)) is None
    between.leave(np, holder, (ans, g), 3)
    assert between.take(np, holder, (ans, g)) == 3


def test_recorded_rules_neither_leave_nor_take():
    """Under ``create_graph`` rules run on Tensors (a tensor namespace): they must stay
    expressions of their inputs, so nothing passes between them."""
    xp = _array_api  # the namespace recorded rules get on the CPU
    assert _array_api.is_tensor_namespace(xp)
    holder = {}
    g = object()
    between.leave(xp, holder, (g,), 1)
    assert holder == {}
    between.leave(np, holder, (g,), 1)
    assert between.take(xp, holder, (g,)) is None and holder  # still there for raw rules


def test_solve_gradients_with_create_graph_match_the_plain_ones():
    """The two rules of ``solve`` share ``A^-T g`` in a plain backward and compute it each in
    a recorded one: the same gradients both ways, and second derivatives exist."""
    rng = np.random.default_rng(0)
    a0 = rng.normal(size=(4, 4)) + 4 * np.eye(4)
    b0 = rng.normal(size=(4, 2))
    grads = []
    for create_graph in (False, True):
        a = ember.tensor(a0, requires_grad=True)
        b = ember.tensor(b0, requires_grad=True)
        out = (ember.linalg.solve(a, b) ** 2).sum()
        ga, gb = ember.autograd.grad(out, (a, b), create_graph=create_graph)
        grads.append((ga.detach().numpy(), gb.detach().numpy()))
        if create_graph:
            (gga,) = ember.autograd.grad(ga.sum(), a)
            assert np.isfinite(gga.numpy()).all()
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-12)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-12)
