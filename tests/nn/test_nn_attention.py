"""``scaled_dot_product_attention``, ``multi_head_attention_forward``, ``MultiheadAttention`` and
``TransformerEncoderLayer``, against finite differences and PyTorch."""
import math
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

from ..opspec import Spec, op_tests
from ..oracle import same_error


def F(lib):
    return lib.nn.functional


# A boolean "take part" mask (L=4, S=6) whose row 1 takes part nowhere: that row gives zeros.
BOOL_MASK = np.array([[1, 0, 1, 1, 0, 1],
                      [0, 0, 0, 0, 0, 0],
                      [1, 1, 1, 0, 0, 0],
                      [0, 1, 0, 1, 0, 1]], dtype=bool)
QKV = ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7))


def sdpa(lib, *args, **kw):
    return F(lib).scaled_dot_product_attention(*args, **kw)


SPECS = [
    Spec("sdpa", sdpa, [QKV, ((3, 4, 5), (3, 6, 5), (3, 6, 7)), ((4, 5), (6, 5), (6, 7)),
                        ((2, 3, 4, 5), (6, 5), (6, 7))],
         tol=5),  # float32 gradients that nearly cancel: the BLAS's summation order shows
    Spec("sdpa_float_mask", sdpa, [QKV + ((4, 6),), QKV + ((3, 1, 6),)]),
    Spec("sdpa_bool_mask", lambda L, q, k, v: sdpa(L, q, k, v, attn_mask=L.tensor(BOOL_MASK)),
         [QKV]),
    Spec("sdpa_causal", lambda L, q, k, v: sdpa(L, q, k, v, is_causal=True),
         [QKV, ((2, 6, 5), (2, 4, 5), (2, 4, 3))]),
    Spec("sdpa_scale", lambda L, q, k, v: sdpa(L, q, k, v, scale=0.3), [QKV]),
    Spec("sdpa_negative_scale", lambda L, q, k, v: sdpa(L, q, k, v, scale=-1.7), [QKV],
         tol=10),
    Spec("sdpa_gqa", lambda L, q, k, v: sdpa(L, q, k, v, enable_gqa=True),
         [((2, 6, 4, 5), (2, 3, 6, 5), (2, 2, 6, 7)), ((4, 3, 5), (1, 6, 5), (1, 6, 2))]),
]

test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)
# finite differences over the 4-d attention cases take seconds each
test_gradcheck = pytest.mark.slow(test_gradcheck)
test_gradgradcheck = pytest.mark.slow(test_gradgradcheck)


def _rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


def _np(t):
    return None if t is None else t.detach().numpy()


def _tol(dtype):
    return dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-9, atol=1e-11)


# --------------------------------------------------------------------------- SDPA


def test_sdpa_fully_masked_row_gives_zeros_and_finite_gradients(torch):
    grads = []
    for lib in (ember, torch):
        q, k, v = (lib.tensor(_rand(s, i), requires_grad=True) for i, s in enumerate(QKV))
        out = sdpa(lib, q, k, v, attn_mask=lib.tensor(BOOL_MASK))
        assert not np.isnan(_np(out)).any()
        assert (_np(out)[:, :, 1] == 0).all()
        out.backward(lib.tensor(_rand(tuple(out.shape), 9)))
        grads.append([_np(t.grad) for t in (q, k, v)])
    for e, t in zip(*grads):
        assert not np.isnan(e).any()
        np.testing.assert_allclose(e, t, **_tol("float64"))
    assert (grads[0][0][:, :, 1] == 0).all()


def test_sdpa_float_mask_gradient_and_float32_mask_on_float64(torch):
    results = []
    for lib in (ember, torch):
        q, k, v = (lib.tensor(_rand(s, i), requires_grad=True) for i, s in enumerate(QKV))
        mask = lib.tensor(_rand((4, 6), 5), dtype=lib.float32, requires_grad=True)
        out = sdpa(lib, q, k, v, attn_mask=mask)
        assert str(out.dtype) == "torch.float64"
        out.backward(lib.tensor(_rand(tuple(out.shape), 9)))
        results.append([_np(out), _np(mask.grad)])
    for e, t in zip(*results):
        np.testing.assert_allclose(e, t, rtol=1e-6, atol=1e-7)


def test_sdpa_dropout_statistics():
    # value = identity: the output *is* the (dropped-out) attention matrix
    ember.manual_seed(0)
    q = ember.tensor(_rand((50, 4, 8, 3), 1))
    k = ember.tensor(_rand((50, 4, 16, 3), 2))
    eye = ember.eye(16, dtype=ember.float64)
    p = 0.3
    full = sdpa(ember, q, k, eye).numpy()
    dropped = sdpa(ember, q, k, eye, dropout_p=p).numpy()
    kept = dropped != 0
    assert abs((~kept).mean() - p) < 0.01
    np.testing.assert_allclose(dropped[kept], full[kept] / (1 - p), rtol=1e-12)
    assert sdpa(ember, q, k, eye, dropout_p=1.0).abs().sum().item() == 0
    np.testing.assert_array_equal(sdpa(ember, q, k, eye, dropout_p=-0.5).numpy(), full)


SDPA_ERRORS = [
    lambda L: sdpa(L, L.zeros(2, 3), L.zeros(2, 3, dtype=L.float64), L.zeros(2, 3)),
    lambda L: sdpa(L, L.zeros(3), L.zeros(2, 3), L.zeros(2, 3)),
    lambda L: sdpa(L, L.zeros(2, 3), L.zeros(2, 3), L.zeros(2, 3),
                   attn_mask=L.zeros(2, 2, dtype=L.int64)),
    lambda L: sdpa(L, L.zeros(2, 3), L.zeros(2, 3), L.zeros(2, 3),
                   attn_mask=L.zeros(2, 2, dtype=L.float16)),
    lambda L: sdpa(L, L.zeros(2, 3), L.zeros(2, 3), L.zeros(2, 3), attn_mask=L.zeros(2, 2),
                   is_causal=True),
    lambda L: sdpa(L, L.zeros(2, 3), L.zeros(2, 3), L.zeros(2, 3), attn_mask=L.zeros(3, 2)),
    lambda L: sdpa(L, L.zeros(2, 3), L.zeros(2, 3), L.zeros(2, 3), attn_mask=L.zeros(4, 2, 2)),
    lambda L: sdpa(L, L.zeros(2, 3), L.zeros(2, 4), L.zeros(2, 3)),
    lambda L: sdpa(L, L.zeros(1, 2, 3), L.zeros(1, 4, 3), L.zeros(1, 3, 3)),
    lambda L: sdpa(L, L.zeros(3, 2, 3), L.zeros(2, 4, 3), L.zeros(2, 4, 3), enable_gqa=True),
    lambda L: sdpa(L, L.zeros(2, 3), L.zeros(2, 3), L.zeros(2, 3), enable_gqa=True),
    lambda L: sdpa(L, L.zeros(2, 3), L.zeros(2, 3), L.zeros(2, 3), dropout_p=1.5),
]


@pytest.mark.parametrize("case", range(len(SDPA_ERRORS)))
def test_sdpa_errors(torch, case):
    same_error(SDPA_ERRORS[case], torch)


# --------------------------------------------------------------------------- MultiheadAttention


def build_pair(torch, dtype, cls="MultiheadAttention", *args, **kw):
    """The same module in both libraries, with random (not initial) parameter values."""
    tm = getattr(torch.nn, cls)(*args, dtype=getattr(torch, dtype), **kw)
    em = getattr(ember.nn, cls)(*args, dtype=getattr(ember, dtype), **kw)
    rng = np.random.default_rng(3)
    state = OrderedDict((k, rng.standard_normal(tuple(v.shape)) * 0.5)
                        for k, v in tm.state_dict().items())
    tm.load_state_dict(OrderedDict((k, torch.tensor(v, dtype=getattr(torch, dtype)))
                                   for k, v in state.items()))
    em.load_state_dict(OrderedDict((k, ember.tensor(v, dtype=getattr(ember, dtype)))
                                   for k, v in state.items()))
    return em, tm


def run_pair(torch, em, tm, shapes, dtype, share="", masks=None, **kw):
    """Run both modules on the same inputs; compare outputs, weights, grad_fn names and the
    gradients of the inputs and of every parameter."""
    arrays = [_rand(s, 10 + i) for i, s in enumerate(shapes)]
    results = []
    for lib, mod in ((ember, em), (torch, tm)):
        ins = [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True) for a in arrays]
        if share == "qkv":
            ins = ins[:1] * 3
        elif share == "kv":
            ins = [ins[0], ins[1], ins[1]]
        m = {name: lib.tensor(v, dtype=getattr(lib, dtype)) if v.dtype.kind == "f" else
             lib.tensor(v) for name, v in (masks or {}).items()}
        out = mod(*ins, **m, **kw)
        res = out if isinstance(out, tuple) else (out, None)
        outs = [o for o in res if o is not None]
        rng = np.random.default_rng(7)
        lib.autograd.backward(outs, [lib.tensor(rng.uniform(-1, 1, tuple(o.shape)),
                                                dtype=o.dtype) for o in outs])
        results.append(dict(
            out=[_np(o) for o in res], names=[type(o.grad_fn).__name__ for o in outs],
            grads=[_np(t.grad) for t in ins[:len(set(map(id, ins)))]],
            params={n: _np(p.grad) for n, p in mod.named_parameters()}))
    e, t = results
    assert e["names"] == t["names"]
    for a, b in zip(e["out"], t["out"]):
        assert (a is None) == (b is None)
        if b is not None:
            assert a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_allclose(a, b, **_tol(dtype))
    for a, b in zip(e["grads"], t["grads"]):
        np.testing.assert_allclose(a, b, **_tol(dtype))
    assert list(e["params"]) == list(t["params"])
    for name in t["params"]:
        np.testing.assert_allclose(e["params"][name], t["params"][name], err_msg=name,
                                   **_tol(dtype))
    return e["out"]


CAUSAL = np.triu(np.full((4, 4), -np.inf), 1)
MASK_46 = np.array([[0, 1, 0, 0, 1, 0], [1, 0, 0, 1, 0, 0], [0, 0, 0, 0, 0, 1],
                    [0, 1, 1, 0, 0, 0]], dtype=bool)
KPM_36 = np.array([[0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 1]], dtype=bool)

MHA_CASES = {
    # name: (constructor kwargs, input shapes, which inputs are one tensor, masks, forward kw)
    "cross": ({}, [(4, 3, 8), (6, 3, 8), (6, 3, 8)], "", None, {}),
    "self": ({}, [(4, 3, 8)], "qkv", None, {}),
    "kv_shared": ({}, [(4, 3, 8), (6, 3, 8)], "kv", None, {}),
    "unbatched": ({}, [(4, 8), (6, 8), (6, 8)], "", None, {}),
    "batch_first": ({"batch_first": True}, [(3, 4, 8), (3, 6, 8), (3, 6, 8)], "", None, {}),
    "batch_first_self": ({"batch_first": True}, [(3, 4, 8)], "qkv", None, {}),
    "batch_first_unbatched": ({"batch_first": True}, [(4, 8), (6, 8), (6, 8)], "", None, {}),
    "kdim_vdim": ({"kdim": 3, "vdim": 5}, [(4, 3, 8), (6, 3, 3), (6, 3, 5)], "", None, {}),
    "no_bias": ({"bias": False}, [(4, 3, 8), (6, 3, 8), (6, 3, 8)], "", None, {}),
    "bias_kv": ({"add_bias_kv": True}, [(4, 3, 8), (6, 3, 8), (6, 3, 8)], "",
                {"attn_mask": MASK_46, "key_padding_mask": KPM_36}, {}),
    "zero_attn": ({"add_zero_attn": True, "kdim": 3, "vdim": 5},
                  [(4, 3, 8), (6, 3, 3), (6, 3, 5)], "",
                  {"attn_mask": MASK_46, "key_padding_mask": KPM_36}, {}),
    "bias_kv_zero_attn_unbatched": ({"add_bias_kv": True, "add_zero_attn": True},
                                    [(4, 8), (6, 8), (6, 8)], "",
                                    {"key_padding_mask": KPM_36[0]}, {}),
    "bool_masks": ({}, [(4, 3, 8), (6, 3, 8), (6, 3, 8)], "",
                   {"attn_mask": MASK_46, "key_padding_mask": KPM_36}, {}),
    "float_masks": ({}, [(4, 3, 8), (6, 3, 8), (6, 3, 8)], "",
                    {"attn_mask": _rand((4, 6), 1), "key_padding_mask": _rand((3, 6), 2)}, {}),
    "mask_3d": ({}, [(4, 3, 8), (6, 3, 8), (6, 3, 8)], "",
                {"attn_mask": _rand((6, 4, 6), 3) > 0.3}, {}),
    "mask_3d_unbatched": ({}, [(4, 8), (6, 8), (6, 8)], "",
                          {"attn_mask": _rand((2, 4, 6), 3)}, {}),
    "kpm_only": ({}, [(4, 3, 8), (6, 3, 8), (6, 3, 8)], "",
                 {"key_padding_mask": KPM_36}, {}),
    "per_head_weights": ({"num_heads": 4}, [(4, 3, 8), (6, 3, 8), (6, 3, 8)], "",
                         {"attn_mask": MASK_46}, {"average_attn_weights": False}),
    "per_head_unbatched": ({"num_heads": 4}, [(4, 8), (6, 8), (6, 8)], "", None,
                           {"average_attn_weights": False}),
    "no_weights": ({}, [(4, 3, 8), (6, 3, 8), (6, 3, 8)], "", None, {"need_weights": False}),
    "no_weights_masks": ({"add_bias_kv": True, "add_zero_attn": True},
                         [(4, 3, 8), (6, 3, 8), (6, 3, 8)], "",
                         {"attn_mask": MASK_46, "key_padding_mask": KPM_36},
                         {"need_weights": False}),
    "no_weights_mask_3d": ({}, [(4, 3, 8), (6, 3, 8), (6, 3, 8)], "",
                           {"attn_mask": _rand((6, 4, 6), 4)}, {"need_weights": False}),
    "no_weights_unbatched_first": ({"batch_first": True}, [(4, 8)], "qkv",
                                   {"attn_mask": MASK_46[:, :4]}, {"need_weights": False}),
    "causal_hint": ({}, [(4, 3, 8)], "qkv", {"attn_mask": CAUSAL},
                    {"need_weights": False, "is_causal": True}),
    "causal_hint_weights": ({}, [(4, 3, 8)], "qkv", {"attn_mask": CAUSAL},
                            {"is_causal": True}),
    "causal_hint_kpm": ({"batch_first": True}, [(3, 4, 8)], "qkv",
                        {"attn_mask": CAUSAL,
                         "key_padding_mask": np.where(KPM_36[:, :4], -np.inf, 0.0)},
                        {"need_weights": False, "is_causal": True}),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", list(MHA_CASES))
def test_multihead_attention_matches_pytorch(torch, case, dtype):
    kw, shapes, share, masks, fwd = MHA_CASES[case]
    kw = {"embed_dim": 8, "num_heads": 2, **kw}
    em, tm = build_pair(torch, dtype, "MultiheadAttention", **kw)
    out, weights = run_pair(torch, em, tm, shapes, dtype, share, masks, **fwd)
    assert (weights is None) == (fwd.get("need_weights") is False)


def test_fully_masked_rows_nan_with_weights_zero_without(torch):
    # PyTorch's two paths differ here: softmax gives nan, scaled_dot_product_attention zeros.
    mask = np.zeros((4, 6), dtype=bool)
    mask[2] = True
    em, tm = build_pair(torch, "float64", "MultiheadAttention", 8, 2)
    for need in (True, False):
        outs = []
        for lib, mod in ((ember, em), (torch, tm)):
            x = lib.tensor(_rand((4, 3, 8), 1))
            kv = lib.tensor(_rand((6, 3, 8), 2))
            outs.append(_np(mod(x, kv, kv, attn_mask=lib.tensor(mask), need_weights=need)[0]))
        np.testing.assert_allclose(outs[0], outs[1], rtol=1e-9, atol=1e-11)
        assert np.isnan(outs[0][2]).all() == need
        assert not np.isnan(np.delete(outs[0], 2, axis=0)).any()


def test_multihead_attention_dropout_statistics():
    ember.manual_seed(0)
    m = ember.nn.MultiheadAttention(8, 2, dropout=0.4, dtype=ember.float64)
    q = ember.tensor(_rand((16, 64, 8), 1))
    kv = ember.tensor(_rand((16, 64, 8), 2))
    m.eval()
    out_eval, full = (_np(t) for t in m(q, kv, kv, average_attn_weights=False))
    np.testing.assert_array_equal(_np(m(q, kv, kv)[0]), out_eval)  # no dropout in eval
    m.train()
    dropped = _np(m(q, kv, kv, average_attn_weights=False)[1])
    kept = dropped != 0
    assert abs((~kept).mean() - 0.4) < 0.01
    np.testing.assert_allclose(dropped[kept], full[kept] / 0.6, rtol=1e-12)
    # need_weights=False drops out inside scaled_dot_product_attention: the output changes
    out1 = _np(m(q, kv, kv, need_weights=False)[0])
    assert not np.allclose(out1, _np(m(q, kv, kv, need_weights=False)[0]))
    assert abs(out1.mean() - out_eval.mean()) < 0.05  # dropout keeps the expectation


def test_multihead_attention_parameters_and_init(torch):
    cases = [dict(), dict(kdim=3, vdim=5), dict(bias=False, add_bias_kv=True)]
    for kw in cases:
        em, tm = ember.nn.MultiheadAttention(16, 4, **kw), torch.nn.MultiheadAttention(16, 4, **kw)
        e_params = [(n, tuple(p.shape)) for n, p in em.named_parameters()]
        assert e_params == [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
        assert list(em.state_dict()) == list(tm.state_dict())
        for name in ("in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight",
                     "in_proj_bias", "bias_k", "bias_v"):
            assert (getattr(em, name) is None) == (getattr(tm, name) is None), name
        assert type(em.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
        assert isinstance(em.out_proj, ember.nn.Linear)
    ember.manual_seed(0)
    m = ember.nn.MultiheadAttention(64, 4, add_bias_kv=True)
    w = m.in_proj_weight.detach().numpy()
    bound = math.sqrt(6 / (64 + 3 * 64))  # xavier_uniform_ on the packed (3E, E) weight
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound
    assert (m.in_proj_bias.detach().numpy() == 0).all()
    assert (m.out_proj.bias.detach().numpy() == 0).all()
    assert np.abs(m.out_proj.weight.detach().numpy()).max() <= 1 / math.sqrt(64)  # Linear's
    bk = np.concatenate([m.bias_k.detach().numpy().ravel(), m.bias_v.detach().numpy().ravel()])
    assert 0.1 < bk.std() < 0.25  # xavier_normal_ on (1, 1, 64): std sqrt(2 / 65) = 0.175
    sep = ember.nn.MultiheadAttention(64, 4, kdim=32)
    kb = math.sqrt(6 / (64 + 32))
    assert kb * 0.95 < np.abs(sep.k_proj_weight.detach().numpy()).max() <= kb


def test_reprs(torch):
    for kw in (dict(), dict(bias=False, kdim=3, vdim=5, add_bias_kv=True), dict(dropout=0.2)):
        assert repr(ember.nn.MultiheadAttention(8, 2, **kw)) == \
            repr(torch.nn.MultiheadAttention(8, 2, **kw))
    for kw in (dict(), dict(norm_first=True, bias=False, layer_norm_eps=1e-6, dropout=0.0),
               dict(activation="gelu", batch_first=True)):
        assert repr(ember.nn.TransformerEncoderLayer(8, 2, 16, **kw)) == \
            repr(torch.nn.TransformerEncoderLayer(8, 2, 16, **kw))
    e = ember.nn.TransformerEncoderLayer(8, 2, 16, activation=ember.nn.GELU(approximate="tanh"))
    t = torch.nn.TransformerEncoderLayer(8, 2, 16, activation=torch.nn.GELU(approximate="tanh"))
    assert repr(e) == repr(t)


MHA_ERRORS = [
    lambda L: L.nn.MultiheadAttention(10, 3),
    lambda L: L.nn.MultiheadAttention(0, 3),
    lambda L: L.nn.MultiheadAttention(8, -1),
    lambda L: L.nn.MultiheadAttention(8, 2)(L.zeros(1, 4, 3, 8), L.zeros(1, 4, 3, 8),
                                            L.zeros(1, 4, 3, 8)),
    lambda L: L.nn.MultiheadAttention(8, 2)(L.zeros(4, 3, 8), L.zeros(4, 8), L.zeros(4, 8)),
    lambda L: L.nn.MultiheadAttention(8, 2)(L.zeros(4, 8), L.zeros(4, 3, 8), L.zeros(4, 8)),
    lambda L: L.nn.MultiheadAttention(8, 2)(L.zeros(4, 3, 6), L.zeros(4, 3, 6),
                                            L.zeros(4, 3, 6)),
    lambda L: L.nn.MultiheadAttention(8, 2)(L.zeros(4, 3, 8), L.zeros(5, 3, 8),
                                            L.zeros(4, 3, 8)),
    lambda L: L.nn.MultiheadAttention(8, 2, kdim=3, vdim=5)(L.zeros(4, 3, 8), L.zeros(5, 3, 3),
                                                            L.zeros(4, 3, 5)),
    lambda L: L.nn.MultiheadAttention(8, 2, kdim=3, vdim=5)(L.zeros(4, 3, 8), L.zeros(5, 3, 4),
                                                            L.zeros(5, 3, 5)),
    lambda L: mha_mask(L, attn_mask=L.zeros(4, 5)),
    lambda L: mha_mask(L, attn_mask=L.zeros(5, 4, 6)),
    lambda L: mha_mask(L, attn_mask=L.zeros(1, 4, 6)),
    lambda L: mha_mask(L, attn_mask=L.zeros(1, 1, 4, 6)),
    lambda L: mha_mask(L, attn_mask=L.zeros(4, 6, dtype=L.int64)),
    lambda L: mha_mask(L, key_padding_mask=L.zeros(3, 6, dtype=L.int32)),
    lambda L: mha_mask(L, key_padding_mask=L.zeros(3, 5, dtype=L.bool)),
    lambda L: mha_mask(L, key_padding_mask=L.zeros(2, 6, dtype=L.bool)),
    lambda L: mha_mask(L, key_padding_mask=L.zeros(3, 1, 6, dtype=L.bool)),
    lambda L: mha_mask(L, is_causal=True),
    lambda L: L.nn.MultiheadAttention(8, 2)(L.zeros(4, 8), L.zeros(6, 8), L.zeros(6, 8),
                                            attn_mask=L.zeros(3, 4, 6)),
    lambda L: L.nn.MultiheadAttention(8, 2)(L.zeros(4, 8), L.zeros(6, 8), L.zeros(6, 8),
                                            key_padding_mask=L.zeros(1, 6)),
    lambda L: L.nn.TransformerEncoderLayer(8, 2, activation="tanh"),
    lambda L: mha_mask(L, attn_mask=L.zeros(4, 6, dtype=L.float64)),
    lambda L: mha_mask(L, attn_mask=L.zeros(4, 6, dtype=L.float64), need_weights=False),
]


def mha_mask(L, **kw):
    return L.nn.MultiheadAttention(8, 2)(L.zeros(4, 3, 8), L.zeros(6, 3, 8), L.zeros(6, 3, 8),
                                         **kw)


@pytest.mark.parametrize("case", range(len(MHA_ERRORS)))
def test_multihead_attention_errors(torch, case):
    same_error(MHA_ERRORS[case], torch)


def test_mismatched_mask_types_warn(torch):
    messages = []
    for lib in (ember, torch):
        m = lib.nn.MultiheadAttention(8, 2)
        x = lib.zeros(4, 3, 8)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            m(x, x, x, attn_mask=lib.zeros(4, 4), key_padding_mask=lib.zeros(3, 4).bool())
        messages.append([str(w.message) for w in rec])
    assert messages[0] == messages[1] and len(messages[0]) == 1


# --------------------------------------------------------------------------- the functional


def mha_args(lib, q, k, v, w_in, b_in, w_out, b_out, bias_k=None, bias_v=None, **kw):
    return F(lib).multi_head_attention_forward(q, k, v, 6, 3, w_in, b_in, bias_k, bias_v,
                                               False, 0.0, w_out, b_out, **kw)


MHA_SHAPES = [(4, 2, 6), (5, 2, 6), (5, 2, 6), (18, 6), (18,), (6, 6), (6,)]


@pytest.mark.slow
@pytest.mark.parametrize("need_weights", [True, False])
def test_multi_head_attention_forward_gradcheck(need_weights):
    xs = [ember.tensor(_rand(s, i), requires_grad=True) for i, s in enumerate(MHA_SHAPES)]
    mask = ember.tensor(_rand((4, 5), 9))
    kpm = ember.tensor([[0, 0, 0, -math.inf, 0], [-math.inf, 0, 0, 0, 0]], dtype=ember.float64)

    def f(*a):
        out = mha_args(ember, *a, attn_mask=mask, key_padding_mask=kpm,
                       need_weights=need_weights)
        return tuple(o for o in out if o is not None)
    assert gradcheck(f, xs)
    assert gradgradcheck(f, xs)


def test_multi_head_attention_forward_static_kv_and_separate_weights(torch):
    arrays = [_rand(s, i) for i, s in enumerate([(4, 2, 6), (5, 2, 4), (5, 2, 3), (6, 6),
                                                 (6, 4), (6, 3), (18,), (6, 6), (6,),
                                                 (6, 7, 2), (6, 7, 2)])]
    results = []
    for lib in (ember, torch):
        q, k, v, wq, wk, wv, b, wo, bo, sk, sv = (lib.tensor(a, requires_grad=True)
                                                  for a in arrays)
        out, w = F(lib).multi_head_attention_forward(
            q, k, v, 6, 3, None, b, None, None, True, 0.0, wo, bo,
            use_separate_proj_weight=True, q_proj_weight=wq, k_proj_weight=wk,
            v_proj_weight=wv, static_k=sk, static_v=sv)
        (out.sum() + (w * w).sum()).backward()
        results.append([_np(out), _np(w)] + [_np(t.grad) for t in (q, wq, b, wo, bo, sk, sv)])
    for e, t in zip(*results):
        np.testing.assert_allclose(e, t, **_tol("float64"))


# --------------------------------------------------------------------------- encoder layer


TEL_CASES = {
    "post_norm_relu": ({}, (5, 3, 8), {}),
    "pre_norm_gelu": ({"norm_first": True, "activation": "gelu"}, (5, 3, 8), {}),
    "gelu_module_batch_first": ({"activation": "GELU", "batch_first": True}, (3, 5, 8), {}),
    "masks": ({"norm_first": True}, (5, 3, 8),
              {"src_mask": np.triu(np.full((5, 5), -np.inf), 1),
               "src_key_padding_mask": _rand((3, 5), 1)}),
    "bool_masks_batch_first_causal": ({"batch_first": True}, (3, 5, 8),
                                      {"src_mask": np.triu(np.ones((5, 5), dtype=bool), 1),
                                       "is_causal": True}),
    "unbatched_no_bias": ({"bias": False}, (5, 8), {"src_key_padding_mask": KPM_36[0, :5]}),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", list(TEL_CASES))
def test_transformer_encoder_layer_matches_pytorch(torch, case, dtype):
    kw, shape, fwd = TEL_CASES[case]
    kw = dict(kw)
    libs = {}
    for lib in (ember, torch):
        k = dict(kw)
        if k.get("activation") == "GELU":
            k["activation"] = lib.nn.GELU()
        libs[lib] = lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                   dtype=getattr(lib, dtype), **k)
    em, tm = libs[ember], libs[torch]
    em.load_state_dict(OrderedDict((k, ember.tensor(v.detach().numpy()))
                                   for k, v in tm.state_dict().items()))
    masks = {k: v for k, v in fwd.items() if k != "is_causal"}
    extra = {"is_causal": fwd["is_causal"]} if "is_causal" in fwd else {}
    run_pair(torch, em, tm, [shape], dtype, masks=masks, **extra)


def test_transformer_encoder_layer_dropout_in_training_only():
    ember.manual_seed(0)
    layer = ember.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5)
    x = ember.tensor(_rand((5, 3, 8), 1), dtype=ember.float32)
    layer.eval()
    np.testing.assert_array_equal(_np(layer(x)), _np(layer(x)))
    layer.train()
    assert not np.allclose(_np(layer(x)), _np(layer(x)))
