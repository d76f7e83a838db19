"""Transforms and helpers leave no reference cycles behind: a cycle keeps its tensors alive
until the garbage collector runs, and ``timeit`` (``utils.benchmark.Timer``) turns the
collector off, so a per-sample-gradients benchmark of 100 calls grew to 24 GB."""
import gc

import pytest

import ember
from ember.func import functional_call, grad, vmap
from ember.utils._pytree import tree_flatten, tree_unflatten


@pytest.fixture
def no_collector():
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _cyclic_garbage():
    return gc.collect()


def test_vmap_of_grad_leaves_no_cycles(no_collector):
    model = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.ReLU(), ember.nn.Linear(8, 2))
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(params, x, y):
        out = functional_call(model, params, (x.unsqueeze(0),))
        return ember.nn.functional.cross_entropy(out, y.unsqueeze(0))

    x, y = ember.randn(5, 4), ember.randint(2, (5,))
    grads = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
    assert grads["0.weight"].shape == (5, 8, 4)
    del grads
    assert _cyclic_garbage() == 0


def test_pytree_multi_dot_and_grad_scaler_leave_no_cycles(no_collector):
    a = ember.randn(3)
    leaves, spec = tree_flatten({"a": [a, (a, 1)], "b": None})
    assert tree_unflatten(leaves, spec)["a"][1][0] is a
    mats = [ember.randn(2, 3), ember.randn(3, 4), ember.randn(4, 2)]
    ember.linalg.multi_dot(mats)
    scaler = ember.amp.GradScaler("cpu")
    assert scaler.scale([a, (a,)])[1][0].shape == (3,)
    del leaves, spec
    assert _cyclic_garbage() == 0
