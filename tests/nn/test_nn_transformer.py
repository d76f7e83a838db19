"""``Transformer``, ``TransformerEncoder``/``Decoder`` and their layers against PyTorch: state
dict keys, shapes and initialisation, outputs and every gradient (PyTorch's weights loaded),
PyTorch's inference fast-path values, warnings and errors; finite differences in float64."""
import math
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

from ..oracle import same_error
from .test_nn_attention import KPM_36, _np, _rand, _tol, run_pair

pytestmark = [pytest.mark.filterwarnings("ignore:enable_nested_tensor is True"),
              pytest.mark.filterwarnings("ignore:Support for mismatched"),
              pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")]

CAUSAL_4 = np.triu(np.full((4, 4), -np.inf), 1)
CAUSAL_5 = np.triu(np.full((5, 5), -np.inf), 1)
KPM_35 = KPM_36[:, :5]
KPM_34 = np.array([[0, 0, 1, 1], [0, 0, 0, 0], [0, 1, 0, 0]], dtype=bool)


def _activation(lib, name):
    if name == "callable":
        return lib.nn.functional.silu
    if name == "GELU_tanh":
        return lib.nn.GELU(approximate="tanh")
    return name


def _build(lib, kind, dtype, batch_first=False, norm_first=False, activation="relu",
           bias=True, layers=2, final_norm=True, d=8, nhead=2, ff=16):
    """One of the four stacks, in ``lib``, with dropout 0."""
    kw = dict(dim_feedforward=ff, dropout=0.0, activation=_activation(lib, activation),
              batch_first=batch_first, norm_first=norm_first, bias=bias,
              dtype=getattr(lib, dtype))
    nn = lib.nn
    norm = nn.LayerNorm(d, bias=bias, dtype=getattr(lib, dtype)) if final_norm else None
    if kind == "encoder":
        return nn.TransformerEncoder(nn.TransformerEncoderLayer(d, nhead, **kw), layers, norm)
    if kind == "decoder":
        return nn.TransformerDecoder(nn.TransformerDecoderLayer(d, nhead, **kw), layers, norm)
    if kind == "decoder_layer":
        return nn.TransformerDecoderLayer(d, nhead, **kw)
    return nn.Transformer(d, nhead, layers, layers, **kw)


def _load_random(em, tm, dtype, seed=3):
    """Give PyTorch's module random values and load its state dict into ember's."""
    rng = np.random.default_rng(seed)
    state = OrderedDict((k, rng.standard_normal(tuple(v.shape)) * 0.5)
                        for k, v in tm.state_dict().items())
    tm.load_state_dict(OrderedDict((k, tm.state_dict()[k].new_tensor(v))
                                   for k, v in state.items()))
    em.load_state_dict(OrderedDict((k, ember.tensor(tm.state_dict()[k].numpy()))
                                   for k in state))


def _pair(torch, kind, dtype="float64", **kw):
    em, tm = _build(ember, kind, dtype, **kw), _build(torch, kind, dtype, **kw)
    _load_random(em, tm, dtype)
    return em, tm


def _bf(shape, batch_first):
    """A (L, N, E) shape as the module expects it."""
    return (shape[1], shape[0], shape[2]) if batch_first and len(shape) == 3 else shape


# kind: (build kwargs, input shapes as (L, N, E), masks, forward kwargs)
CASES = {
    "encoder_plain": ("encoder", {}, [(5, 3, 8)], {}, {}),
    "encoder_masks_batch_first": ("encoder", {"batch_first": True}, [(5, 3, 8)],
                                  {"mask": _rand((5, 5), 1), "src_key_padding_mask": KPM_35},
                                  {}),
    "encoder_causal_detected_gelu": ("encoder", {"activation": "gelu"}, [(5, 3, 8)],
                                     {"mask": CAUSAL_5}, {}),
    "encoder_pre_norm_callable": ("encoder", {"norm_first": True, "activation": "callable",
                                              "final_norm": False}, [(5, 3, 8)],
                                  {"src_key_padding_mask": KPM_35}, {}),
    "encoder_bool_causal_hint": ("encoder", {"batch_first": True},
                                 [(5, 3, 8)], {"mask": np.triu(np.ones((5, 5), bool), 1)},
                                 {"is_causal": True}),
    "encoder_unbatched_no_bias": ("encoder", {"bias": False}, [(5, 8)],
                                  {"src_key_padding_mask": KPM_35[0]}, {}),
    "decoder_plain": ("decoder", {}, [(4, 3, 8), (5, 3, 8)], {}, {}),
    "decoder_masks": ("decoder", {"activation": "gelu"}, [(4, 3, 8), (5, 3, 8)],
                      {"tgt_mask": CAUSAL_4, "memory_mask": _rand((4, 5), 2),
                       "tgt_key_padding_mask": KPM_34, "memory_key_padding_mask": KPM_35},
                      {}),
    "decoder_pre_norm_batch_first_bool": ("decoder", {"norm_first": True, "batch_first": True},
                                          [(4, 3, 8), (5, 3, 8)],
                                          {"tgt_mask": np.triu(np.ones((4, 4), bool), 1),
                                           "memory_key_padding_mask": KPM_35},
                                          {"tgt_is_causal": True}),
    "decoder_layer_callable": ("decoder_layer", {"activation": "callable"},
                               [(4, 3, 8), (5, 3, 8)], {"tgt_mask": CAUSAL_4},
                               {"tgt_is_causal": True}),
    "transformer_plain": ("transformer", {}, [(5, 3, 8), (4, 3, 8)], {}, {}),
    "transformer_all_masks": ("transformer", {"activation": "gelu"}, [(5, 3, 8), (4, 3, 8)],
                              {"src_mask": _rand((5, 5), 3), "tgt_mask": CAUSAL_4,
                               "memory_mask": _rand((4, 5), 4),
                               "src_key_padding_mask": KPM_35,
                               "tgt_key_padding_mask": KPM_34,
                               "memory_key_padding_mask": KPM_35}, {}),
    "transformer_pre_norm_batch_first": ("transformer", {"norm_first": True,
                                                         "batch_first": True},
                                         [(5, 3, 8), (4, 3, 8)],
                                         {"tgt_mask": CAUSAL_4,
                                          "src_key_padding_mask": KPM_35},
                                         {"src_is_causal": False}),
    "transformer_callable_unbatched": ("transformer", {"activation": "callable"},
                                       [(5, 8), (4, 8)], {"tgt_mask": CAUSAL_4},
                                       {"tgt_is_causal": True}),
}


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", list(CASES))
def test_matches_pytorch(torch, case, dtype):
    """Outputs, input gradients and every parameter gradient, with PyTorch's weights."""
    kind, kw, shapes, masks, fwd = CASES[case]
    em, tm = _pair(torch, kind, dtype, **kw)
    shapes = [_bf(s, kw.get("batch_first", False)) for s in shapes]
    run_pair(torch, em, tm, shapes, dtype, masks=masks, **fwd)


@pytest.mark.parametrize("kind", ["encoder", "decoder", "transformer"])
def test_state_dict_keys_shapes_and_loading(torch, kind):
    for kw in ({}, {"bias": False, "norm_first": True}, {"final_norm": False}):
        em, tm = _build(ember, kind, "float32", **kw), _build(torch, kind, "float32", **kw)
        es, ts = em.state_dict(), tm.state_dict()
        assert list(es) == list(ts)
        assert [tuple(v.shape) for v in es.values()] == [tuple(v.shape) for v in ts.values()]
        assert [n for n, _ in em.named_modules()] == [n for n, _ in tm.named_modules()]
        assert repr(em) == repr(tm)
        # a PyTorch state dict loads strictly into ember's module, value for value
        em.load_state_dict(OrderedDict((k, ember.tensor(v.numpy())) for k, v in ts.items()))
        for k, v in em.state_dict().items():
            np.testing.assert_array_equal(v.numpy(), ts[k].numpy())


@pytest.mark.slow
def test_custom_encoder_and_decoder(torch):
    def make(lib):
        kw = dict(dropout=0.0, dtype=lib.float64)
        enc = lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16, **kw), 1)
        dec = lib.nn.TransformerDecoder(lib.nn.TransformerDecoderLayer(8, 4, 12, **kw), 2)
        return lib.nn.Transformer(8, 2, custom_encoder=enc, custom_decoder=dec, **kw)
    em, tm = make(ember), make(torch)
    assert list(em.state_dict()) == list(tm.state_dict())
    assert repr(em) == repr(tm)
    _load_random(em, tm, "float64")
    run_pair(torch, em, tm, [(5, 3, 8), (4, 3, 8)], "float64", masks={"tgt_mask": CAUSAL_4})


def test_initialisation_follows_pytorch(torch):
    """Transformer re-draws every matrix with xavier_uniform_; vectors keep their module's
    init (zeros for attention biases, ones/zeros for norms, Linear's uniform for biases);
    a stack's layers are copies of one layer."""
    em = ember.nn.Transformer(16, 2, 2, 2, 24)
    tm = torch.nn.Transformer(16, 2, 2, 2, 24)
    for (name, e), (_, t) in zip(em.named_parameters(), tm.named_parameters()):
        e, t = e.detach().numpy(), t.detach().numpy()
        if t.ndim > 1:
            bound = math.sqrt(6 / (t.shape[0] + t.shape[1]))
            assert np.abs(e).max() <= bound and np.abs(e).max() > 0.9 * bound, name
            assert abs(e.std() - bound / math.sqrt(3)) < 0.15 * bound / math.sqrt(3), name
        elif np.all(t == t.flat[0]):
            np.testing.assert_array_equal(e, t, err_msg=name)
        else:  # Linear biases: uniform within 1/sqrt(fan_in)
            assert np.abs(e).max() <= np.abs(t).max() * 1.5 and e.std() > 0, name
    enc = ember.nn.TransformerEncoder(ember.nn.TransformerEncoderLayer(8, 2, 16), 3)
    first, *rest = enc.layers
    for layer in rest:
        assert layer is not first
        for (n, p), (_, q) in zip(first.named_parameters(), layer.named_parameters()):
            assert p is not q
            np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy(), err_msg=n)


@pytest.mark.parametrize("dtype", [None, "float64", "float16"])
def test_generate_square_subsequent_mask(torch, dtype):
    for sz in (0, 1, 5):
        e = ember.nn.Transformer.generate_square_subsequent_mask(
            sz, dtype=dtype and getattr(ember, dtype))
        t = torch.nn.Transformer.generate_square_subsequent_mask(
            sz, dtype=dtype and getattr(torch, dtype))
        assert str(e.dtype) == str(t.dtype)
        np.testing.assert_array_equal(e.numpy(), t.numpy())
        assert repr(e) == repr(t)


@pytest.mark.slow
def test_gradcheck_tiny_transformer():
    model = ember.nn.Transformer(4, 2, 1, 1, 6, dropout=0.0, dtype=ember.float64)
    src = ember.tensor(_rand((3, 2, 4), 0), requires_grad=True)
    tgt = ember.tensor(_rand((2, 2, 4), 1), requires_grad=True)
    kpm = ember.tensor([[False, False, True], [False, False, False]])
    tgt_mask = model.generate_square_subsequent_mask(2, dtype=ember.float64)

    def f(s, t):
        return model(s, t, tgt_mask=tgt_mask, src_key_padding_mask=kpm,
                     memory_key_padding_mask=kpm)
    assert gradcheck(f, (src, tgt))


def _warnings(lib, make):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make(lib)
    return [(w.category.__name__, str(w.message)) for w in caught]


def _enc(**kw):
    def make(lib):
        k = dict(kw)
        if k.get("activation") == "callable":
            k["activation"] = lib.tanh
        nhead = k.pop("nhead", 2)
        eps = k.pop("eps2", None)
        layer = lib.nn.TransformerEncoderLayer(8, nhead, 16, **k)
        if eps is not None:
            layer.norm2.eps = eps
        return lib.nn.TransformerEncoder(layer, 2)
    return make


@pytest.mark.parametrize("make", [
    _enc(), _enc(batch_first=True), _enc(batch_first=True, norm_first=True),
    _enc(batch_first=True, activation="callable"), _enc(batch_first=True, nhead=1),
    _enc(batch_first=True, bias=False), _enc(batch_first=True, eps2=1e-3),
    _enc(batch_first=True, activation="gelu"),
    lambda lib: lib.nn.TransformerEncoder(lib.nn.Linear(2, 2), 1),
    lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16), 1,
                                          enable_nested_tensor=False),
    lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16),
])
def test_construction_warnings_match_pytorch(torch, make):
    assert _warnings(ember, make) == _warnings(torch, make)


@pytest.mark.parametrize("call", [
    lambda L: L.nn.Transformer(8, 2, 1, 1, 16)(L.zeros(5, 3, 8), L.zeros(4, 2, 8)),
    lambda L: L.nn.Transformer(8, 2, 1, 1, 16, batch_first=True)(L.zeros(3, 5, 8),
                                                                  L.zeros(2, 4, 8)),
    lambda L: L.nn.Transformer(8, 2, 1, 1, 16)(L.zeros(5, 3, 8), L.zeros(4, 3, 6)),
    lambda L: L.nn.Transformer(8, 2, 1, 1, 16)(L.zeros(5, 6), L.zeros(4, 8)),
    lambda L: L.nn.TransformerDecoderLayer(8, 2, activation="tanh"),
    lambda L: L.nn.Transformer(8, 2, activation="swish"),
    lambda L: L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(8, 2, 16), 1)(
        L.zeros(5, 3, 8), src_key_padding_mask=L.zeros(3, 5, dtype=L.int64)),
    lambda L: L.nn.TransformerDecoder(L.nn.TransformerDecoderLayer(8, 2, 16), 1)(
        L.zeros(4, 3, 8), L.zeros(5, 3, 8), tgt_is_causal=True),
])
def test_errors_match_pytorch(torch, call):
    same_error(call, torch)


# --------------------------------------------------------------------------- fast path


def _same(e, t):
    assert e.shape == t.shape
    np.testing.assert_array_equal(np.isnan(e), np.isnan(t))
    np.testing.assert_allclose(e, t, rtol=1e-4, atol=1e-5)


FULLY_PADDED = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1]], dtype=bool)
ROW_MASKED = np.zeros((5, 5), bool)
ROW_MASKED[1] = True
LEFT_ALIGNED = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0], [0, 0, 1, 1, 1]], dtype=bool)
NOT_LEFT_ALIGNED = np.array([[1, 0, 0, 0, 1], [0, 0, 0, 0, 0], [0, 0, 1, 1, 1]], dtype=bool)
SMALL_FLOAT_PAD = np.where(np.arange(5) >= 3, -0.5, 0.0)[None].repeat(3, 0)

LAYER_FAST = {
    # name: (layer kwargs, masks, forward kwargs, in no_grad?)
    "fully_masked_kpm_nan": ({}, {"src_key_padding_mask": FULLY_PADDED}, {}, False),
    "fully_masked_row_nan": ({}, {"src_mask": ROW_MASKED}, {}, False),
    "float_mask_row_nan": ({"norm_first": True},
                           {"src_mask": np.where(ROW_MASKED, -np.inf, 0.0),
                            "src_key_padding_mask": FULLY_PADDED}, {}, False),
    "gelu_tanh_runs_exact_gelu": ({"activation": "GELU_tanh"}, {}, {}, False),
    "causal_hint_without_mask_ignored": ({}, {}, {"is_causal": True}, False),
    "with_grad_general_path": ({"activation": "GELU_tanh"},
                               {"src_key_padding_mask": FULLY_PADDED}, {}, True),
    "odd_heads_general_path": ({"nhead": 1}, {"src_key_padding_mask": FULLY_PADDED}, {}, False),
    "callable_general_path": ({"activation": "callable"},
                              {"src_key_padding_mask": FULLY_PADDED}, {}, False),
}


@pytest.mark.parametrize("case", list(LAYER_FAST))
def test_encoder_layer_inference_values_match_pytorch(torch, case):
    kw, masks, fwd, grad = LAYER_FAST[case]
    kw = dict(kw)
    nhead = kw.pop("nhead", 2)
    activation = kw.pop("activation", "relu")
    x = _rand((3, 5, 8), 0) * 3
    mods = [lib.nn.TransformerEncoderLayer(8, nhead, 16, dropout=0.0, batch_first=True,
                                           activation=_activation(lib, activation), **kw)
            for lib in (ember, torch)]
    _load_random(*mods, "float32")
    _same(*(_np_call(lib, m, x, grad, masks, fwd) for lib, m in zip((ember, torch), mods)))


def _np_call(lib, mod, x, grad, masks, fwd):
    """``mod(x, **masks, **fwd)`` in eval mode, under no_grad unless ``grad``."""
    mod.eval()
    x = lib.tensor(x, dtype=lib.float32)
    masks = {k: lib.tensor(v, dtype=lib.float32) if v.dtype.kind == "f" else lib.tensor(v)
             for k, v in masks.items()}
    with (lib.enable_grad() if grad else lib.no_grad()):
        return _np(mod(x, **masks, **fwd))


ENCODER_FAST = {
    # name: (encoder kwargs, layer kwargs, masks, in no_grad?)
    "padded_positions_zero": ({}, {}, {"src_key_padding_mask": FULLY_PADDED}, False),
    "with_final_norm": ({"norm": True}, {}, {"src_key_padding_mask": LEFT_ALIGNED}, False),
    "not_left_aligned_checked": ({}, {}, {"src_key_padding_mask": NOT_LEFT_ALIGNED}, False),
    "not_left_aligned_unchecked": ({"mask_check": False}, {},
                                   {"src_key_padding_mask": NOT_LEFT_ALIGNED}, False),
    "float_padding_nonzero_pads": ({}, {}, {"src_key_padding_mask": SMALL_FLOAT_PAD}, False),
    "with_mask_no_nesting": ({}, {}, {"src_key_padding_mask": KPM_35, "mask": CAUSAL_5},
                             False),
    "disabled": ({"enable_nested_tensor": False}, {}, {"src_key_padding_mask": FULLY_PADDED},
                 False),
    "with_grad": ({}, {}, {"src_key_padding_mask": FULLY_PADDED}, True),
    "norm_first_no_nesting": ({}, {"norm_first": True},
                              {"src_key_padding_mask": LEFT_ALIGNED}, False),
}


@pytest.mark.parametrize("case", list(ENCODER_FAST))
def test_encoder_inference_values_match_pytorch(torch, case):
    enc_kw, layer_kw, masks, grad = ENCODER_FAST[case]
    x = _rand((3, 5, 8), 0)
    mods = []
    for lib in (ember, torch):
        kw = dict(enc_kw)
        if kw.pop("norm", False):
            kw["norm"] = lib.nn.LayerNorm(8)
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True,
                                               **layer_kw)
        mods.append(lib.nn.TransformerEncoder(layer, 2, **kw))
    _load_random(*mods, "float32")
    e, t = (_np_call(lib, m, x, grad, masks, {}) for lib, m in zip((ember, torch), mods))
    _same(e, t)


def test_multihead_attention_inference_nan_rows_match_pytorch(torch):
    """PyTorch's fused self-attention gives NaN for a query with every key masked out, also
    with ``need_weights=False`` (its general path gives zeros there)."""
    x = _rand((3, 5, 8), 0)
    mods = [lib.nn.MultiheadAttention(8, 2, batch_first=True) for lib in (ember, torch)]
    _load_random(*mods, "float32")
    for masks in ({"key_padding_mask": FULLY_PADDED}, {"attn_mask": ROW_MASKED},
                  {"attn_mask": np.where(ROW_MASKED, -np.inf, 0.0)}):
        for grad in (False, True):
            res = []
            for lib, m in zip((ember, torch), mods):
                m.eval()
                q = lib.tensor(x, dtype=lib.float32)
                mk = {k: lib.tensor(v, dtype=lib.float32) if v.dtype.kind == "f"
                      else lib.tensor(v) for k, v in masks.items()}
                with (lib.enable_grad() if grad else lib.no_grad()):
                    out, w = m(q, q, q, need_weights=False, **mk)
                assert w is None
                res.append(_np(out))
            _same(*res)


# --------------------------------------------------------------------------- a real program


def _word_language_model(lib):
    """pytorch/examples' word_language_model TransformerModel, in short: it subclasses
    ``nn.Transformer``, replaces its decoder and uses only the encoder with a causal mask."""
    nn = lib.nn

    class TransformerModel(nn.Transformer):
        def __init__(self, ntoken, ninp, nhead, nhid, nlayers):
            super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid,
                             num_encoder_layers=nlayers, dropout=0.0)
            self.input_emb = nn.Embedding(ntoken, ninp)
            self.decoder = nn.Linear(ninp, ntoken)
            self.ninp = ninp

        def forward(self, src):
            mask = nn.Transformer.generate_square_subsequent_mask(len(src))
            src = self.input_emb(src) * math.sqrt(self.ninp)
            return lib.nn.functional.log_softmax(
                self.decoder(self.encoder(src, mask=mask)), dim=-1)

    return TransformerModel(11, 8, 2, 16, 2)


def test_word_language_model_transformer(torch):
    em, tm = _word_language_model(ember), _word_language_model(torch)
    assert list(em.state_dict()) == list(tm.state_dict())
    _load_random(em, tm, "float32")
    tokens = np.random.default_rng(0).integers(0, 11, (6, 3))
    outs = []
    for lib, m in ((ember, em), (torch, tm)):
        out = m(lib.tensor(tokens))
        loss = -out[:, :, 0].mean()
        loss.backward()
        outs.append((_np(out), {n: _np(p.grad) for n, p in m.named_parameters()}))
    (eo, eg), (to, tg) = outs
    np.testing.assert_allclose(eo, to, **_tol("float32"))
    assert list(eg) == list(tg)
    for n in tg:
        assert (eg[n] is None) == (tg[n] is None), n
        if tg[n] is not None:
            np.testing.assert_allclose(eg[n], tg[n], err_msg=n, rtol=1e-4, atol=1e-5)


def test_fastpath_switch_off_gives_general_path_values(torch):
    """With ``backends.mha.set_fastpath_enabled(False)`` neither library takes the fast path:
    fully masked queries give finite values and padded positions are computed."""
    x = _rand((3, 5, 8), 0)
    encs = [lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, batch_first=True), 2) for lib in (ember, torch)]
    _load_random(*encs, "float32")
    masks = {"src_key_padding_mask": FULLY_PADDED}
    on = [_np_call(lib, m, x, False, masks, {}) for lib, m in zip((ember, torch), encs)]
    for lib in (ember, torch):
        lib.backends.mha.set_fastpath_enabled(False)
    try:
        assert ember.backends.mha.get_fastpath_enabled() is False
        off = [_np_call(lib, m, x, False, masks, {}) for lib, m in zip((ember, torch), encs)]
    finally:
        for lib in (ember, torch):
            lib.backends.mha.set_fastpath_enabled(True)
    _same(*on)
    _same(*off)
    assert np.all(on[0][2] == 0) and np.all(np.isfinite(off[0])) and not np.all(off[0][2] == 0)
