"""Saved-tensor hooks, ``save_on_cpu`` and activation checkpointing, against PyTorch."""
import tracemalloc
import warnings

import numpy as np
import pytest

import ember
from ember.autograd.saved_hooks import disable_saved_tensors_hooks, save_on_cpu
from ember.autograd.saved_hooks import saved_tensors_hooks as ember_hooks
from ember.utils.checkpoint import checkpoint, checkpoint_sequential


def _hooks(lib):
    return ember_hooks if lib is ember else lib.autograd.graph.saved_tensors_hooks


def test_pack_and_unpack_see_what_pytorch_saves(torch):
    def run(lib):
        log = []

        def pack(t):
            log.append(("pack", tuple(t.shape), round(float(t.sum()), 4)))
            return t * 1  # a different tensor: backward must use what unpack returns

        def unpack(t):
            log.append(("unpack", tuple(t.shape)))
            return t
        x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
        with _hooks(lib)(pack, unpack):
            z = (x.exp() * x).sum()
        z.backward()
        # One node's tensors may be packed in another order than PyTorch's (its generated
        # code saves in an order of its own per op); what is packed, when, and the results
        # are the same.
        packs = [entry for entry in log if entry[0] == "pack"]
        return sorted(packs), [entry[0] for entry in log], np.round(x.grad.tolist(), 4).tolist()
    assert run(ember) == run(torch)


def test_hooks_replace_what_backward_reads(torch):
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with _hooks(lib)(lambda t: t, lambda t: t * 10):
            y = (x * x).sum()
        y.backward()
        return x.grad.tolist()
    assert run(ember) == run(torch) == [20.0, 40.0]


def test_disabled_hooks_refuse_with_the_given_message():
    with disable_saved_tensors_hooks("not here"):
        with pytest.raises(RuntimeError, match="^not here$"):
            with ember_hooks(lambda t: t, lambda t: t):
                pass


def test_save_on_cpu_gives_the_same_gradients():
    x = ember.randn(5, 4, requires_grad=True)
    lin = ember.nn.Linear(4, 3)
    with save_on_cpu():
        ember.tanh(lin(x)).sum().backward()
    expected = x.grad.numpy().copy()
    x.grad = None
    ember.tanh(lin(x)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def _model(lib, depth=4, width=16):
    lib.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [lib.nn.Linear(width, width), lib.nn.Tanh()]
    return lib.nn.Sequential(*layers)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_gradients_equal_plain_backward(use_reentrant):
    model = _model(ember)
    x = ember.randn(8, 16, requires_grad=True)
    model(x).pow(2).sum().backward()
    plain = [p.grad.numpy().copy() for p in model.parameters()] + [x.grad.numpy().copy()]
    model.zero_grad()
    x.grad = None
    checkpoint(model, x, use_reentrant=use_reentrant).pow(2).sum().backward()
    got = [p.grad.numpy() for p in model.parameters()] + [x.grad.numpy()]
    for g, e in zip(got, plain):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7)


def test_checkpoint_repeats_dropout_with_the_same_random_state():
    x = ember.ones(64, 8, requires_grad=True)
    drop = ember.nn.Dropout(0.5)
    ember.manual_seed(3)
    y = checkpoint(lambda a: drop(a).exp(), x, use_reentrant=False)
    y.sum().backward()
    # d/dx of exp(mask * x / 0.5) = 2 * mask * exp(...): zero exactly where the forward dropped
    np.testing.assert_array_equal(x.grad.numpy() == 0, y.detach().numpy() == 1)


def test_checkpoint_grad_fns_match_pytorch(torch):
    import torch.utils.checkpoint as tcp

    def run(lib, mod):
        w = lib.ones(3, requires_grad=True)
        x = lib.ones(3, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs = [mod.checkpoint(lambda a: a.sin() * w, x, use_reentrant=True),
                    mod.checkpoint(lambda a: a.sin() * w, x, use_reentrant=False),
                    mod.checkpoint_sequential(lib.nn.Sequential(lib.nn.Linear(3, 3)), 1, x,
                                              use_reentrant=True),
                    mod.checkpoint(lambda a: a.sin() * w, lib.ones(3), use_reentrant=True)]
        return [type(o.grad_fn).__name__ for o in outs], outs[-1].requires_grad
    assert run(ember, ember.utils.checkpoint) == run(torch, tcp) == (
        ["CheckpointFunctionBackward", "MulBackward0", "ViewBackward0", "NoneType"], False)


def test_checkpoint_warning_texts_match_pytorch(torch):
    def run(lib, mod):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            mod.checkpoint(lambda a: a * 2, lib.ones(2, requires_grad=True))
            mod.checkpoint_sequential([lambda a: a * 2], 1, lib.ones(2, requires_grad=True))
            mod.checkpoint(lambda a: a * 2, lib.ones(2), use_reentrant=True)
        return [str(c.message) for c in caught]
    import torch.utils.checkpoint as tcp
    assert run(ember, ember.utils.checkpoint) == run(torch, tcp)


def test_checkpoint_sequential_equals_the_model():
    model = _model(ember, depth=6)
    x = ember.randn(4, 16, requires_grad=True)
    expected = model(x)
    got = checkpoint_sequential(model, 3, x, use_reentrant=False)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-6)


def _peak(step):
    tracemalloc.start()
    tracemalloc.reset_peak()
    step()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


@pytest.mark.slow
def test_checkpointing_lowers_peak_memory():
    model = _model(ember, depth=16, width=256)
    x = ember.randn(256, 256, requires_grad=True)
    plain = _peak(lambda: model(x).sum().backward())
    checked = _peak(lambda: checkpoint_sequential(model, 4, x, use_reentrant=False)
                    .sum().backward())
    assert checked < 0.6 * plain
