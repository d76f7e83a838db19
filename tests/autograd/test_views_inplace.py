"""Views whose storage is written in place after they were taken, against PyTorch.

A view shares its base's version counter. When the base (or another view of it) is written
in place, the view's history is made anew from the base's current one the next time it is
used (PyTorch's ``AsStridedBackward0``), so gradients reach what the write brought in. Each
case runs the same program on ember and on PyTorch and compares what a user can see:
``grad_fn`` names, ``requires_grad``/``is_leaf``, every leaf's ``.grad`` and errors.
"""
import numpy as np
import pytest

import ember
from tests.oracle import Raised, outcome


def _leaves(lib):
    x = lib.tensor([1.0, -2.0, 3.0, 0.5], requires_grad=True)
    w = lib.tensor(2.0, requires_grad=True)
    return x, w


def _seen(t):
    """What a user sees of one tensor's autograd state."""
    fn = t.grad_fn
    return (type(fn).__name__ if fn is not None else None, t.requires_grad, t.is_leaf)


def _grads(*leaves):
    return [None if t.grad is None else t.grad.numpy().tolist() for t in leaves]


def base_setitem(lib):
    x, w = _leaves(lib)
    a = x * 1
    v = a[:]
    a[2] = w
    seen = _seen(v)
    v.backward(lib.ones(4))
    return seen, _grads(x, w)


def base_mul_(lib):
    x, w = _leaves(lib)
    a = x * 1
    v = a[1:]
    a.mul_(w)
    seen = _seen(v)
    (v * v).sum().backward()
    return seen, _grads(x, w)


def transpose_view(lib):
    x, w = _leaves(lib)
    a = (x * 1).view(2, 2)
    v = a.T
    a[0, 1] = w
    seen = _seen(v)
    (v * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    return seen, _grads(x, w)


def view_then_unsqueeze(lib):
    x, w = _leaves(lib)
    a = x * 1
    v = a.view(2, 2).unsqueeze(0)
    a.add_(w)
    seen = _seen(v)
    v.sum().backward()
    return seen, _grads(x, w)


def sibling_views(lib):
    x, w = _leaves(lib)
    a = x * 1
    v1, v2 = a[:2], a[1:]
    v2.mul_(w)
    seen = _seen(v1), _seen(v2), _seen(a)
    (v1 * lib.tensor([1.0, 10.0])).sum().backward()
    return seen, _grads(x, w)


def base_without_grad_gains_it(lib):
    x, w = _leaves(lib)
    a = lib.zeros(4)
    v = a[1:]
    before = _seen(v)
    a.add_(x).mul_(w)
    after = _seen(v)
    v.sum().backward()
    return before, after, _grads(x, w)


def view_of_view_after_write(lib):
    x, w = _leaves(lib)
    a = x * 1
    v = a[1:]
    a.mul_(2)
    vv = v[1:]
    seen = _seen(v), _seen(vv)
    vv.sum().backward()
    return seen, _grads(x, w)


def leaf_view_after_no_grad_write(lib):
    x, w = _leaves(lib)
    v = x[:2]
    with lib.no_grad():
        x.mul_(2)
    seen = _seen(v)
    (v * w).sum().backward()
    return seen, _grads(x, w)


def view_written_twice(lib):
    x, w = _leaves(lib)
    a = x * 1
    v = a[:3]
    v[0] = w
    a[1] = w * 3
    seen = _seen(v), _seen(a)
    (v * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
    return seen, _grads(x, w)


def multi_output_view_indirect(lib):
    x, _ = _leaves(lib)
    a = x * 1
    first, _ = a.split(2)
    a.mul_(2)
    return _seen(first)


def no_grad_view_indirect(lib):
    x, _ = _leaves(lib)
    a = x * 1
    with lib.no_grad():
        v = a[:2]
    before = v.requires_grad, v.is_leaf
    a.mul_(2)
    return before, v.requires_grad, _seen(v)


def no_grad_view_of_leaf_used(lib):
    x, w = _leaves(lib)
    with lib.no_grad():
        v = x[:2]
    seen = _seen(v)
    (v * w).sum().backward()
    return seen, _grads(x, w), v.grad, (v * 2).requires_grad


def no_grad_view_written(lib):
    x, _ = _leaves(lib)
    with lib.no_grad():
        v = x[:2]
    v.mul_(2)


def split_of_leaf_written(lib):
    x, _ = _leaves(lib)
    x.split(2)[0].mul_(2)


def detached_view_untouched(lib):
    x, w = _leaves(lib)
    a = x * 1
    d = a.detach()[:2]
    a.mul_(w)
    return _seen(d)


def saved_view_modified_through_base(lib):
    x, _ = _leaves(lib)
    a = x * 1
    v = a[:2]
    y = v.exp()
    a.add_(1)
    y.sum().backward()


def retain_grad_view_after_write(lib):
    x, w = _leaves(lib)
    a = x * 1
    v = a[2:]
    a[0] = w
    v.retain_grad()
    (v * 3).sum().backward()
    return _seen(v), v.grad.numpy().tolist(), _grads(x, w)


CASES = [base_setitem, base_mul_, transpose_view, view_then_unsqueeze, sibling_views,
         base_without_grad_gains_it, view_of_view_after_write, leaf_view_after_no_grad_write,
         view_written_twice, multi_output_view_indirect, no_grad_view_indirect,
         no_grad_view_of_leaf_used, no_grad_view_written, split_of_leaf_written,
         detached_view_untouched, saved_view_modified_through_base,
         retain_grad_view_after_write]


@pytest.mark.parametrize("case", CASES, ids=lambda f: f.__name__)
def test_same_as_pytorch(case, torch):
    got, want = outcome(case, ember), outcome(case, torch)
    assert got == want


def test_view_sees_write_to_base_without_pytorch():
    """The issue's first example, checked by hand: ``x.grad`` is zero where ``w`` was written."""
    x = ember.ones(3, requires_grad=True)
    w = ember.tensor(5.0, requires_grad=True)
    a = x * 1
    v = a[:]
    a[2] = w
    assert type(v.grad_fn).__name__ == "AsStridedBackward0"
    v.backward(ember.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 2.0, 0.0])
    assert w.grad.item() == 3.0


def test_errors_name_the_indirect_write():
    x = ember.ones(4, requires_grad=True)
    a = x * 1
    first, _ = a.split(2)
    a.mul_(2)
    got = outcome(lambda: first.grad_fn)
    assert isinstance(got, Raised) and got.type == "RuntimeError"
    assert got.message.startswith("Output 0 of Split is a view and its base or another "
                                  "view of its base has been modified inplace.")
