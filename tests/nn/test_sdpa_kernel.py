"""``nn.attention.sdpa_kernel`` / ``SDPBackend`` against PyTorch (CPU): which backend choices
run ``F.scaled_dot_product_attention`` and which raise, and what each raises."""
import warnings

import numpy as np
import pytest

import ember
from tests.conftest import to_np

_ARGS = {"4d": ((1, 2, 4, 8), {}), "3d": ((2, 4, 8), {}),
         "4d_dropout": ((1, 2, 4, 8), {"dropout_p": 0.5})}


def _backends(lib, names):
    B = lib.nn.attention.SDPBackend
    return [getattr(B, n) for n in names] if isinstance(names, list) else getattr(B, names)


def _run(lib, backends, case):
    shape, kwargs = _ARGS[case]
    q = lib.tensor(np.linspace(-1, 1, int(np.prod(shape))).reshape(shape), dtype=lib.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch says why its flash kernel was not used
        try:
            with lib.nn.attention.sdpa_kernel(_backends(lib, backends)):
                return to_np(lib.nn.functional.scaled_dot_product_attention(q, q, q, **kwargs))
        except RuntimeError as e:
            return str(e)


@pytest.mark.parametrize("backends", ["MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION",
                                      "CUDNN_ATTENTION", "OVERRIDEABLE", [],
                                      ["EFFICIENT_ATTENTION", "FLASH_ATTENTION"],
                                      ["CUDNN_ATTENTION", "MATH"]])
@pytest.mark.parametrize("case", ["4d", "3d"])
def test_sdpa_kernel_choices(torch, backends, case):
    got, want = _run(ember, backends, case), _run(torch, backends, case)
    if isinstance(want, str):
        assert got == want
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_flash_only_refuses_dropout(torch):
    assert _run(ember, "FLASH_ATTENTION", "4d_dropout") == _run(torch, "FLASH_ATTENTION",
                                                                   "4d_dropout")


def test_sdpa_kernel_restores_and_decorates(torch):
    def scenario(lib):
        B = lib.nn.attention.SDPBackend
        seen = []

        @lib.nn.attention.sdpa_kernel(B.EFFICIENT_ATTENTION)
        def attend():
            return _run(lib, "MATH", "4d") is not None

        q = lib.ones(1, 1, 2, 2)
        with lib.nn.attention.sdpa_kernel([B.CUDNN_ATTENTION]) as entered:
            seen.append(entered)
            try:
                lib.nn.functional.scaled_dot_product_attention(q, q, q)
            except RuntimeError as e:
                seen.append(str(e)[:30])
            seen.append(attend())
        out = lib.nn.functional.scaled_dot_product_attention(q, q, q)  # all enabled again
        seen.append(out.shape == q.shape)
        seen.append((repr(B.MATH), int(B.FLASH_ATTENTION), B.ERROR.name))
        return seen
    assert scenario(ember) == scenario(torch)


@pytest.mark.parametrize("bad", ["math", 0, None])
def test_sdpa_kernel_argument_errors(torch, bad):
    with pytest.raises(AssertionError) as want:
        with torch.nn.attention.sdpa_kernel(bad):
            pass
    with pytest.raises(AssertionError) as got:
        with ember.nn.attention.sdpa_kernel(bad):
            pass
    assert str(got.value) == str(want.value)
