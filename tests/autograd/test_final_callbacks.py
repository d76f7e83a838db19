"""``Variable._execution_engine.queue_callback``: a callback queued during backward runs
once every node has (DistributedDataParallel waits for its all-reduces there)."""
import pytest

import ember


def _run(lib):
    order = []
    x = lib.ones(2, requires_grad=True)
    w = lib.ones(2, requires_grad=True)

    def hook(g):
        lib.autograd.Variable._execution_engine.queue_callback(
            lambda: order.append(("callback", w.grad is not None)))
        order.append("hook")
        return g

    x.register_hook(hook)
    (x * w * 2).sum().backward()
    (x * 3).sum().backward()  # (the hook queues again: one callback in each backward)
    return order


def test_a_queued_callback_runs_after_every_node_as_pytorchs(torch):
    assert _run(ember) == _run(torch) == ["hook", ("callback", True), "hook",
                                          ("callback", True)]


def test_outside_backward_queueing_is_refused_as_pytorch_refuses():
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during "
                                           "backward pass."):
        ember.autograd.Variable._execution_engine.queue_callback(lambda: None)
