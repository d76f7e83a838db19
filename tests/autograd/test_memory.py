"""Graphs free themselves by reference counting: no cycles between tensors and nodes.

With the cyclic garbage collector switched off, a training loop must run in flat memory, and
``gc.collect()`` must find no ember object that only a cycle kept alive.
"""
import gc
import tracemalloc

import numpy as np
import pytest

import ember
from ember import nn
from ember.autograd.graph import Node


def _model():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))


def _cyclic_garbage(fn):
    """The ember tensors and nodes that only reference cycles kept alive after ``fn()``."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        fn()
        gc.collect()
        return [o for o in gc.garbage if isinstance(o, (ember.Tensor, Node))]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def _train(model, steps, create_graph=False):
    opt = ember.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = ember.tensor(np.random.default_rng(0).normal(size=(4, 8)), dtype=ember.float32)
    y = ember.tensor([0, 1, 2, 1])
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        if create_graph:  # a gradient penalty: double backward through the graph
            grads = ember.autograd.grad(loss, list(model.parameters()), create_graph=True)
            loss = loss + sum((g * g).sum() for g in grads)
        loss.backward()
        opt.step()


@pytest.mark.slow
def test_training_loop_leaves_no_cycles():
    model = _model()
    assert _cyclic_garbage(lambda: _train(model, 5)) == []


@pytest.mark.slow
def test_double_backward_leaves_no_cycles():
    model = _model()
    assert _cyclic_garbage(lambda: _train(model, 5, create_graph=True)) == []


@pytest.mark.slow
def test_retained_graph_is_freed_when_dropped():
    def run():
        x = ember.randn(5, requires_grad=True)
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        y.backward()
    assert _cyclic_garbage(run) == []


@pytest.mark.slow
@pytest.mark.parametrize("create_graph", [False, True])
def test_memory_is_flat_over_1000_steps_without_gc(create_graph):
    # The first steps fill the allocator's free lists (Python keeps up to 2,000 freed tuples
    # of each size: they stay traced, and fill at a pace of their own) and ember's caches
    # (save plans); after that, a step must give back everything it took. A leak grows in
    # every window, so the last of three is measured.
    model = _model()
    steps = 1000 if not create_graph else 300
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        _train(model, 2 * steps, create_graph)
        for _ in range(3):
            base = tracemalloc.get_traced_memory()[0]
            _train(model, steps, create_graph)
            grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
        gc.enable()
    assert grown < 16 * 1024, f"memory grew by {grown} bytes over {steps} steps"
