"""``nn.utils.fusion`` against PyTorch: fused layers compute bn(layer(x)) and hold PyTorch's
fused weights."""
import numpy as np
import pytest

import ember
from tests.conftest import to_np


def _set(lib, module, seed):
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for t in [*module.parameters(), *module.buffers()]:
            if t.is_floating_point():
                t.copy_(lib.tensor(rng.uniform(0.5, 1.5, tuple(t.shape))))
    return module.eval()


def _pair(lib, kind, bias, affine, dtype):
    if kind == "conv":
        layer, bn = lib.nn.Conv2d(3, 4, 3, bias=bias), lib.nn.BatchNorm2d(4, affine=affine)
        x = (2, 3, 5, 5)
    elif kind == "conv_t":
        layer = lib.nn.ConvTranspose2d(3, 4, 2, bias=bias)
        bn, x = lib.nn.BatchNorm2d(4, affine=affine), (2, 3, 3, 3)
    else:
        layer, bn = lib.nn.Linear(3, 4, bias=bias), lib.nn.BatchNorm1d(4, affine=affine)
        x = (5, 3)
    layer, bn = _set(lib, layer.to(dtype), 1), _set(lib, bn.to(dtype), 2)
    return layer, bn, lib.tensor(np.random.default_rng(3).standard_normal(x), dtype=dtype)


def _fuse(lib, kind, bias, affine, dtype):
    layer, bn, x = _pair(lib, kind, bias, affine, getattr(lib, dtype))
    f = lib.nn.utils
    fused = (f.fuse_linear_bn_eval(layer, bn) if kind == "linear"
             else f.fuse_conv_bn_eval(layer, bn, transpose=kind == "conv_t"))
    return (fused, to_np(fused(x)), to_np(bn(layer(x))), type(fused.weight).__name__,
            fused.weight.requires_grad, fused.bias.requires_grad, layer.weight is fused.weight)


@pytest.mark.parametrize("kind", ["conv", "conv_t", "linear"])
@pytest.mark.parametrize("bias,affine", [(True, True), (False, True), (True, False)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_layers_match_torch(torch, kind, bias, affine, dtype):
    if kind == "linear" and not affine:  # PyTorch's linear fusion needs the bn weight
        with pytest.raises(TypeError) as want:
            _fuse(torch, kind, bias, affine, dtype)
        with pytest.raises(TypeError) as got:
            _fuse(ember, kind, bias, affine, dtype)
        assert str(got.value) == str(want.value)
        return
    got, want = _fuse(ember, kind, bias, affine, dtype), _fuse(torch, kind, bias, affine, dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got[1], got[2], rtol=tol, atol=tol)  # fused == bn(layer(x))
    np.testing.assert_allclose(got[1], want[1], rtol=tol, atol=tol)
    for name in ("weight", "bias"):
        g, w = getattr(got[0], name), getattr(want[0], name)
        assert str(g.dtype) == str(w.dtype)
        np.testing.assert_allclose(to_np(g), to_np(w), rtol=tol, atol=tol)
    assert got[3:] == want[3:]


def test_fusion_errors(torch):
    def errors(lib):
        out = []
        conv, bn = lib.nn.Conv2d(1, 2, 1), lib.nn.BatchNorm2d(2)
        lin, bn3 = lib.nn.Linear(2, 2).eval(), lib.nn.BatchNorm1d(3).eval()
        no_stats = lib.nn.BatchNorm1d(2, track_running_stats=False).eval()
        for call in (lambda: lib.nn.utils.fuse_conv_bn_eval(conv, bn),
                     lambda: lib.nn.utils.fuse_linear_bn_eval(lin, bn3),
                     lambda: lib.nn.utils.fuse_linear_bn_eval(lin, no_stats)):
            try:
                call()
            except AssertionError as e:
                out.append(str(e))
        return out
    assert errors(ember) == errors(torch)
    assert len(errors(torch)) == 3
