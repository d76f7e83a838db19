"""The CuPy backend: the same ops and gradients on ``device='cuda'`` as on the CPU.

Skipped without CuPy and a GPU (CI has none); run on a GPU machine to exercise it.
"""
import numpy as np
import pytest

import ember

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(), reason="no CuPy GPU backend")


def _pair(values, requires_grad=True):
    cpu = ember.tensor(values, requires_grad=requires_grad)
    gpu = ember.tensor(values, device="cuda", requires_grad=requires_grad)
    return cpu, gpu


def test_creation_and_repr_on_cuda():
    x = ember.ones(2, 3, device="cuda")
    assert x.is_cuda and str(x.device) == "cuda:0" and x.type() == "torch.cuda.FloatTensor"
    assert repr(ember.tensor([1.0, 2.0], device="cuda", requires_grad=True)) == \
        "tensor([1., 2.], device='cuda:0', requires_grad=True)"
    assert repr(ember.arange(3, device="cuda")) == "tensor([0, 1, 2], device='cuda:0')"
    assert ember.zeros(2, device=ember.device("cuda", 0)).device == ember.device("cuda:0")


def test_seed_network_gradients_match_cpu():
    rng = np.random.default_rng(0)
    W0, b0 = rng.standard_normal((8, 10)), rng.standard_normal(10)
    results = []
    for dev in ("cpu", "cuda"):
        x = ember.ones(8, requires_grad=True, device=dev)
        y = ember.zeros(10, requires_grad=True, device=dev)
        W = ember.tensor(W0, dtype=ember.float32, requires_grad=True, device=dev)
        b = ember.tensor(b0, dtype=ember.float32, requires_grad=True, device=dev)
        z = ember.matmul(x, W) + b
        loss = ember.nn.functional.binary_cross_entropy_with_logits(z, y)
        loss.backward()
        assert loss.device.type == dev and W.grad.device.type == dev
        results.append([t.grad.cpu().numpy() for t in (x, y, W, b)] + [loss.item()])
    for c, g in zip(*results):
        np.testing.assert_allclose(c, g, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", [
    lambda x: (x * x * 3 + 2).mean(),
    lambda x: (x.exp() / (1 + x.sigmoid())).sum(),
    lambda x: (x.view(2, 2) @ x.view(2, 2).t()).log1p().sum(),
    lambda x: (x[1:] ** 2).sum() + x[[0, 0, 3]].sum(),
    lambda x: ember.where(x > 0.5, x, -x).abs().sum(),
])
def test_ops_and_gradients_match_cpu(fn):
    cpu, gpu = _pair([0.25, 0.5, 1.5, 2.0])
    fn(cpu).backward()
    fn(gpu).backward()
    np.testing.assert_allclose(cpu.grad.numpy(), gpu.grad.cpu().numpy(), rtol=1e-6)


def test_second_derivative_on_cuda():
    x = ember.tensor([1.0, -2.0], device="cuda", requires_grad=True)
    (g,) = ember.autograd.grad((x ** 3).sum(), x, create_graph=True)
    (h,) = ember.autograd.grad(g.sum(), x)
    assert h.cpu().tolist() == [6.0, -12.0]


def test_copyslices_on_cuda():
    x = ember.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    y = ember.empty(3, device="cuda")
    y[0] = x[0] ** 2
    y[1] = x[0] ** 2 + 5 * x[1] ** 2
    y[2] = 3 * x[1]
    y.backward(ember.ones(3, device="cuda"))
    assert x.grad.cpu().tolist() == [4.0, 23.0]


def test_to_and_cpu_carry_gradients_across_devices():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = (x.to("cuda") * 2).cpu()
    assert type(y.grad_fn).__name__ == "ToCopyBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0] and not x.grad.is_cuda


def test_mixing_devices_raises_pytorchs_error():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but "
                                           "found at least two devices, cuda:0 and cpu!"):
        ember.ones(2, device="cuda") + ember.ones(2)


def test_numpy_of_cuda_tensor_refuses():
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        ember.ones(2, device="cuda").numpy()


@pytest.mark.parametrize("fn", [
    lambda x, dev: x.split(2)[0].exp().sum(),             # an unused output of a multi-output op
    lambda x, dev: (x[1:] * x[[0, 0, 2]]).sum(),          # basic and advanced indexing
    lambda x, dev: (x.view(2, 2).max(dim=1).values ** 3).sum(),  # a named-tuple result
    lambda x, dev: ember.linalg.det(x.view(2, 2) + 3 * ember.eye(2, device=dev)),
])
def test_double_backward_stays_on_the_gpu(fn):
    results = []
    for dev in ("cpu", "cuda"):
        x = ember.tensor([0.25, 0.5, 1.5, 2.0], device=dev, dtype=ember.float64,
                         requires_grad=True)
        (g,) = ember.autograd.grad(fn(x, dev), x, create_graph=True)
        assert g.device.type == dev
        (h,) = ember.autograd.grad((g * g).sum(), x, allow_unused=True)
        results.append(None if h is None else h.cpu().numpy())
    if results[0] is None:
        assert results[1] is None
    else:
        np.testing.assert_allclose(results[0], results[1], rtol=1e-10)
