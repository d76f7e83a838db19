"""``nn.RNN``, ``nn.LSTM``, ``nn.GRU``, their cells and ``nn.utils.rnn``, against PyTorch.

The same weights (torch's initial state, loaded into ember) and the same inputs in both
libraries: outputs, final states and the gradients of the input, the initial state and every
parameter must agree. Finite differences check the derivatives without PyTorch.
"""
import itertools
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

from ..oracle import raised

RNG = np.random.default_rng(0)
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported")

# name, constructor keywords: every recurrent flavour
MODES = [("RNN", {}), ("RNN", {"nonlinearity": "relu"}), ("LSTM", {}),
         ("LSTM", {"proj_size": 3}), ("GRU", {})]
MODE_IDS = ["rnn_tanh", "rnn_relu", "lstm", "lstm_proj", "gru"]
INPUT, HIDDEN, T, B = 3, 5, 4, 2
TOL = {"float32": dict(rtol=1e-4, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-12)}


def both_modules(torch, name, dtype="float32", *args, **kw):
    """The same layer in both libraries: torch's initial weights loaded into ember's."""
    tm = getattr(torch.nn, name)(*args, **kw).to(getattr(torch, dtype))
    em = getattr(ember.nn, name)(*args, **kw).to(getattr(ember, dtype))
    em.load_state_dict(OrderedDict((k, ember.tensor(v.detach().numpy()))
                                   for k, v in tm.state_dict().items()))
    return em, tm


def leaf(lib, array, dtype):
    return lib.tensor(array, dtype=getattr(lib, dtype), requires_grad=True)


def flat(result):
    """The tensors of a result: ``h``, ``(h, c)``, ``(out, h)`` or ``(out, (h, c))``."""
    if isinstance(result, tuple):
        return [t for part in result for t in flat(part)]
    return [result]


def check_same(torch, em, tm, e_res, t_res, e_inputs, t_inputs, dtype, grad_fn=False):
    """Values and shapes of the results, then the gradients of inputs and parameters."""
    e_outs, t_outs = flat(e_res), flat(t_res)
    assert len(e_outs) == len(t_outs)
    for e, t in zip(e_outs, t_outs):
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **TOL[dtype])
        if grad_fn:
            # ember has no in-place transpose_ op: PyTorch's batch_first RNN/GRU output
            # carries TransposeBackward1, ember's the out-of-place TransposeBackward0.
            t_name = type(t.grad_fn).__name__.replace("TransposeBackward1", "TransposeBackward0")
            assert type(e.grad_fn).__name__ == t_name
    rng = np.random.default_rng(1)
    vs = [rng.standard_normal(tuple(t.shape)) for t in t_outs]
    ember.autograd.backward(e_outs, [ember.tensor(v, dtype=o.dtype) for v, o in zip(vs, e_outs)])
    torch.autograd.backward(t_outs, [torch.tensor(v, dtype=o.dtype) for v, o in zip(vs, t_outs)])
    for e, t in zip(e_inputs, t_inputs):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), **TOL[dtype])
    t_params = dict(tm.named_parameters())
    e_params = list(em.named_parameters())
    assert [n for n, _ in e_params] == list(t_params)
    for name, p in e_params:
        np.testing.assert_allclose(p.grad.numpy(), t_params[name].grad.numpy(), **TOL[dtype],
                                   err_msg=name)


def hidden_shapes(name, kw, num_layers, bidirectional, batched):
    """The shapes of ``h_0`` (and ``c_0``) the layer expects."""
    lead = (num_layers * (2 if bidirectional else 1),) + ((B,) if batched else ())
    shapes = [lead + (kw.get("proj_size") or HIDDEN,)]
    if name == "LSTM":
        shapes.append(lead + (HIDDEN,))
    return shapes


def run_layer(torch, name, kw, num_layers, bidirectional, batch_first, batched, with_hx, bias,
              dtype):
    em, tm = both_modules(torch, name, dtype, INPUT, HIDDEN, num_layers=num_layers,
                          bidirectional=bidirectional, batch_first=batch_first, bias=bias, **kw)
    shape = ((B, T) if batch_first else (T, B)) if batched else (T,)
    x = RNG.standard_normal(shape + (INPUT,))
    hs = [RNG.standard_normal(s)
          for s in hidden_shapes(name, kw, num_layers, bidirectional, batched)]
    results = []
    for lib, m in ((ember, em), (torch, tm)):
        inputs = [leaf(lib, x, dtype)] + ([leaf(lib, h, dtype) for h in hs] if with_hx else [])
        args = inputs[:1]
        if with_hx:
            args.append(tuple(inputs[1:]) if name == "LSTM" else inputs[1])
        results.append((m(*args), inputs))
    (e_res, e_in), (t_res, t_in) = results
    # float32 LSTM runs PyTorch's oneDNN kernel (MkldnnRnnLayerBackward0); float64 the
    # native composition that ember mirrors, so grad_fn names are compared there.
    check_same(torch, em, tm, e_res, t_res, e_in, t_in, dtype, grad_fn=dtype == "float64")


# (batched, with_hx, bias): every pair of values of the three flags appears
FLAG_SETS = [(True, True, True), (True, False, False), (False, True, False),
             (False, False, True)]


@pytest.mark.slow
@pytest.mark.parametrize("batch_first", [False, True], ids=["seq_first", "batch_first"])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_layer_float32_matches_pytorch(torch, mode, num_layers, bidirectional, batch_first):
    for batched, with_hx, bias in FLAG_SETS:
        run_layer(torch, *mode, num_layers, bidirectional, batch_first, batched, with_hx, bias,
                  "float32")


@pytest.mark.parametrize("flags", FLAG_SETS, ids=lambda f: "-".join(map(str, f)))
@pytest.mark.parametrize("batch_first", [False, True], ids=["seq_first", "batch_first"])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_layer_float64_matches_pytorch(torch, mode, num_layers, bidirectional, batch_first,
                                       flags):
    run_layer(torch, *mode, num_layers, bidirectional, batch_first, *flags, "float64")


# --------------------------------------------------------------------------- cells

CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("LSTMCell", {}),
         ("GRUCell", {})]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batched,with_hx,bias", FLAG_SETS)
@pytest.mark.parametrize("cell", CELLS, ids=["rnn_tanh", "rnn_relu", "lstm", "gru"])
def test_cell_matches_pytorch(torch, cell, batched, with_hx, bias, dtype):
    name, kw = cell
    em, tm = both_modules(torch, name, dtype, INPUT, HIDDEN, bias=bias, **kw)
    lead = (B,) if batched else ()
    x = RNG.standard_normal(lead + (INPUT,))
    hs = [RNG.standard_normal(lead + (HIDDEN,)) for _ in range(2 if name == "LSTMCell" else 1)]
    results = []
    for lib, m in ((ember, em), (torch, tm)):
        inputs = [leaf(lib, x, dtype)] + ([leaf(lib, h, dtype) for h in hs] if with_hx else [])
        args = inputs[:1]
        if with_hx:
            args.append(tuple(inputs[1:]) if name == "LSTMCell" else inputs[1])
        results.append((m(*args), inputs))
    (e_res, e_in), (t_res, t_in) = results
    check_same(torch, em, tm, e_res, t_res, e_in, t_in, dtype, grad_fn=True)


# --------------------------------------------------------------------------- finite differences


def functional_call(module, params, args):
    """``module(*args)`` with some parameters replaced by the given tensors."""
    saved = dict(module._parameters)
    module._parameters.update(params)
    try:
        return module(*args)
    finally:
        module._parameters.update(saved)


def module_gradcheck(module, args, check=gradcheck, only=None, **kw):
    """Finite differences with respect to the inputs ``args`` and the parameters (those
    named in ``only``, default all; the others stay fixed)."""
    module = module.double()
    names = [n for n, _ in module.named_parameters() if only is None or n in only]
    params = [getattr(module, n).detach().clone().requires_grad_(True) for n in names]
    n = len(args)

    def f(*tensors):
        x, *hx = tensors[:n]
        call = [x] + ([tuple(hx)] if len(hx) == 2 else hx)
        return tuple(flat(functional_call(module, dict(zip(names, tensors[n:])), call)))

    return check(f, list(args) + params, **kw)


def f64(*shape):
    return ember.tensor(RNG.uniform(-1, 1, shape), dtype=ember.float64, requires_grad=True)


# Full Jacobians for one small layer of each kind; the projection check of fast mode (a random
# vᵀJu per output) for the larger stacks, whose full Jacobians would take minutes.


@pytest.mark.slow
@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_gradcheck(bidirectional):
    ember.manual_seed(0)
    d = 2 if bidirectional else 1
    m = ember.nn.LSTM(2, 2, batch_first=True, bidirectional=bidirectional)
    assert module_gradcheck(m, [f64(2, 3, 2), f64(d, 2, 2), f64(d, 2, 2)])
    m = ember.nn.LSTM(2, 3, num_layers=2, bidirectional=bidirectional, proj_size=2)
    assert module_gradcheck(m, [f64(3, 2, 2), f64(2 * d, 2, 2), f64(2 * d, 2, 3)],
                            fast_mode=True)


@pytest.mark.slow
@pytest.mark.parametrize("bidirectional", [False, True])
def test_gru_and_rnn_gradcheck(bidirectional):
    ember.manual_seed(0)
    d = 2 if bidirectional else 1
    for m in (ember.nn.GRU(2, 2, bidirectional=bidirectional),
              ember.nn.RNN(2, 2, nonlinearity="relu", bidirectional=bidirectional)):
        assert module_gradcheck(m, [f64(3, 2, 2), f64(d, 2, 2)])
    for m in (ember.nn.GRU(2, 3, num_layers=2, bidirectional=bidirectional),
              ember.nn.RNN(2, 3, num_layers=2, bidirectional=bidirectional)):
        assert module_gradcheck(m, [f64(3, 2, 2), f64(2 * d, 2, 3)], fast_mode=True)


@pytest.mark.slow
def test_cells_gradcheck_and_gradgradcheck():
    ember.manual_seed(0)
    cells = [(ember.nn.LSTMCell(2, 2), [f64(2, 2), f64(2, 2), f64(2, 2)]),
             (ember.nn.GRUCell(2, 2), [f64(2, 2), f64(2, 2)]),
             (ember.nn.RNNCell(2, 2), [f64(2, 2), f64(2, 2)])]
    for cell, args in cells:
        assert module_gradcheck(cell, args)
        # second derivatives (full Jacobians: kept small) through input, state and recurrence
        small = [a[:1] for a in args]
        assert module_gradcheck(cell, small, gradgradcheck, only=("weight_hh", "bias_ih"))


@pytest.mark.slow
def test_layers_gradgradcheck():
    ember.manual_seed(0)
    assert module_gradcheck(ember.nn.GRU(1, 2), [f64(2, 1, 1), f64(1, 1, 2)], gradgradcheck,
                            only=("weight_hh_l0",))
    assert module_gradcheck(ember.nn.LSTM(1, 1, bidirectional=True),
                            [f64(2, 1, 1), f64(2, 1, 1), f64(2, 1, 1)], gradgradcheck,
                            only=("weight_ih_l0_reverse", "weight_hh_l0"))


def test_packed_gradcheck():
    ember.manual_seed(0)
    pack = ember.nn.utils.rnn.pack_padded_sequence
    for m, fast in ((ember.nn.LSTM(2, 2, bidirectional=True), True), (ember.nn.GRU(2, 2), False)):
        m = m.double()
        names = [n for n, _ in m.named_parameters()]
        params = [p.detach().clone().requires_grad_(True) for p in m.parameters()]

        def f(x, *ps, m=m, names=names):
            out, hidden = functional_call(m, dict(zip(names, ps)),
                                          [pack(x, [2, 3, 1], enforce_sorted=False)])
            return (out.data,) + (hidden if isinstance(hidden, tuple) else (hidden,))

        assert gradcheck(f, [f64(3, 3, 2)] + params, fast_mode=fast)


# --------------------------------------------------------------------------- structure


CONFIGS = [("RNN", (3, 4), {}), ("RNN", (3, 4, 2, "relu"), {"bias": False}),
           ("LSTM", (10, 20), {"num_layers": 2, "batch_first": True}),
           ("LSTM", (3, 4), {"proj_size": 2, "bidirectional": True, "num_layers": 3}),
           ("LSTM", (3, 4), {"proj_size": 2, "bias": False}),
           ("GRU", (3, 4), {"num_layers": 2, "dropout": 0.25, "bidirectional": True}),
           ("GRU", (3, 4, 1, False, True), {}),
           ("RNNCell", (3, 4), {}), ("RNNCell", (3, 4), {"nonlinearity": "relu"}),
           ("RNNCell", (3, 4, False), {}), ("LSTMCell", (3, 4), {"bias": False}),
           ("GRUCell", (3, 4), {})]


@pytest.mark.parametrize("name,args,kw", CONFIGS)
def test_repr_state_dict_and_attributes(torch, name, args, kw):
    tm = getattr(torch.nn, name)(*args, **kw)
    em = getattr(ember.nn, name)(*args, **kw)
    assert repr(em) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in em.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    for attr in ("input_size", "hidden_size", "bias", "num_layers", "batch_first", "dropout",
                 "bidirectional", "proj_size", "mode", "nonlinearity", "_flat_weights_names",
                 "_all_weights"):
        assert getattr(em, attr, "absent") == getattr(tm, attr, "absent"), attr
    if hasattr(tm, "all_weights"):
        assert [[tuple(w.shape) for w in ws] for ws in em.all_weights] == \
            [[tuple(w.shape) for w in ws] for ws in tm.all_weights]
        assert all(w is getattr(em, n)
                   for n, w in zip(em._flat_weights_names, em._flat_weights, strict=True))
        assert em.flatten_parameters() is None


@pytest.mark.parametrize("name,kw", [("RNN", {}), ("LSTM", {"proj_size": 2}), ("GRU", {}),
                                     ("RNNCell", {}), ("LSTMCell", {}), ("GRUCell", {})])
def test_default_init_is_uniform_in_one_over_sqrt_hidden(name, kw):
    hidden = 16
    m = getattr(ember.nn, name)(64, hidden, **kw)
    bound = 1 / np.sqrt(hidden)
    values = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    assert values.dtype == np.float32
    assert values.min() >= -bound and values.max() <= bound
    # spread over the whole interval, mean near zero, flat histogram: uniform, not normal
    assert values.min() < -0.95 * bound and values.max() > 0.95 * bound
    assert abs(values.mean()) < 0.05 * bound
    hist, _ = np.histogram(values, bins=4, range=(-bound, bound))
    assert hist.min() > 0.8 * hist.max()
    for p in m.parameters():
        assert p.requires_grad


def test_dtype_and_reset_parameters():
    m = ember.nn.GRU(3, 4, dtype=ember.float64)
    assert {p.dtype for p in m.parameters()} == {ember.float64}
    before = m.weight_hh_l0.detach().clone()
    m.reset_parameters()
    assert not bool((m.weight_hh_l0 == before).all())
    out, h = m(ember.randn(5, 2, 3, dtype=ember.float64))
    assert out.dtype == ember.float64 and h.shape == (1, 2, 4)


def test_no_grad_and_double_conversion(torch):
    em, tm = both_modules(torch, "LSTM", "float32", 3, 4)
    x = RNG.standard_normal((5, 2, 3))
    with ember.no_grad():
        out, (h, c) = em(ember.tensor(x, dtype=ember.float32))
    assert out.grad_fn is None and not out.requires_grad
    em.double()
    tm.double()
    e_out, _ = em(ember.tensor(x))
    t_out, _ = tm(torch.tensor(x))
    assert str(e_out.dtype) == "torch.float64"
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-12)


# --------------------------------------------------------------------------- dropout


def test_dropout_eval_matches_pytorch(torch):
    em, tm = both_modules(torch, "GRU", "float32", INPUT, HIDDEN, num_layers=3, dropout=0.5)
    em.eval()
    tm.eval()
    x = RNG.standard_normal((T, B, INPUT))
    e_res = em(leaf(ember, x, "float32"))
    t_res = tm(leaf(torch, x, "float32"))
    for e, t in zip(flat(e_res), flat(t_res)):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **TOL["float32"])


def dropout_probe(lib, p):
    """A 2-layer relu RNN whose second layer outputs the dropped-out ones of the first."""
    m = lib.nn.RNN(8, 8, num_layers=2, nonlinearity="relu", dropout=p)
    with lib.no_grad():
        for w in m.parameters():
            w.zero_()
        m.bias_ih_l0.fill_(1.0)  # layer 0 outputs relu(1) = 1 everywhere
        m.weight_ih_l1.copy_(lib.eye(8))  # layer 1 passes its (dropped) input through
    return m


@pytest.mark.parametrize("p", [0.3, 0.6])
def test_dropout_between_layers_in_training(torch, p):
    for lib in (ember, torch):
        lib.manual_seed(0)
        m = dropout_probe(lib, p)
        x = lib.zeros(50, 20, 8)
        out = m(x)[0].detach().numpy()
        kept = out != 0
        # values are 0 (dropped) or 1 / (1 - p) (kept and rescaled)
        np.testing.assert_allclose(out[kept], 1 / (1 - p), rtol=1e-6)
        assert abs((~kept).mean() - p) < 0.03, lib.__name__
        again = m(x)[0].detach().numpy()
        assert (again != out).any()  # a fresh mask each call
        m.eval()
        np.testing.assert_array_equal(m(x)[0].detach().numpy(), np.ones((50, 20, 8)))
    ember.manual_seed(3)
    first = dropout_probe(ember, p)(ember.zeros(5, 2, 8))[0].detach().numpy()
    ember.manual_seed(3)
    np.testing.assert_array_equal(
        dropout_probe(ember, p)(ember.zeros(5, 2, 8))[0].detach().numpy(), first)


def test_dropout_warning_and_no_dropout_on_last_layer(torch):
    for lib in (ember, torch):
        with pytest.warns(UserWarning) as record:
            m = lib.nn.LSTM(3, 4, dropout=0.5)
        messages = [str(w.message) for w in record]
        assert ("dropout option adds dropout after all but last recurrent layer, so non-zero "
                "dropout expects num_layers greater than 1, but got dropout=0.5 and "
                "num_layers=1") in messages
        a = m(lib.ones(3, 2, 3))[0]
        b = m(lib.ones(3, 2, 3))[0]
        assert bool((a == b).all())  # a single layer: nothing to drop
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.nn.LSTM(3, 4, num_layers=2, dropout=0.5)


# --------------------------------------------------------------------------- errors


CONSTRUCTOR_ERRORS = [
    ("RNN", (3, 4), {"nonlinearity": "foo"}), ("RNN", (3, 4), {"proj_size": 2}),
    ("GRU", (3, 4), {"proj_size": 2}), ("LSTM", (3, 4), {"proj_size": 4}),
    ("LSTM", (3, 4), {"proj_size": -1}), ("LSTM", (3, 4), {"dropout": 2}),
    ("LSTM", (3, 4), {"dropout": True}), ("LSTM", (3, 4), {"dropout": "0.5"}),
    ("LSTM", (3, 4), {"bias": 1}), ("GRU", (3, 4), {"batch_first": 1}),
    ("LSTM", (3.0, 4), {}), ("LSTM", (0, 4), {}), ("RNN", (3, 4.0), {}), ("RNN", (3, 0), {}),
    ("GRU", (3, 4), {"num_layers": 0}),
]


@pytest.mark.parametrize("name,args,kw", CONSTRUCTOR_ERRORS)
def test_constructor_errors(torch, name, args, kw):
    expected = raised(lambda: getattr(torch.nn, name)(*args, **kw))
    assert expected is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert raised(lambda: getattr(ember.nn, name)(*args, **kw)) == expected


def lstm_hx(lib, s0, s1):
    return (lib.zeros(*s0), lib.zeros(*s1))


FORWARD_ERRORS = [
    ("LSTM", lambda L: (L.zeros(2, 2, 2, 3),)),
    ("RNN", lambda L: (L.zeros(2, 2, 2, 3),)),
    ("GRU", lambda L: (L.zeros(2, 2, 2, 3),)),
    ("GRU", lambda L: (L.zeros(3),)),
    ("GRU", lambda L: (L.zeros(5, 2, 2),)),
    ("LSTM", lambda L: (L.zeros(5, 2),)),
    ("GRU", lambda L: (L.zeros(5, 2, 3), L.zeros(1, 3, 4))),
    ("RNN", lambda L: (L.zeros(5, 2, 3), L.zeros(2, 2, 4))),
    ("RNN", lambda L: (L.zeros(5, 2, 3), L.zeros(1, 2, 5))),
    ("GRU", lambda L: (L.zeros(5, 2, 3), L.zeros(3, 4))),
    ("GRU", lambda L: (L.zeros(5, 3), L.zeros(1, 1, 4))),
    ("RNN", lambda L: (L.zeros(5, 3), L.zeros(2, 4))),
    ("LSTM", lambda L: (L.zeros(5, 2, 3), lstm_hx(L, (1, 2, 4), (1, 3, 4)))),
    ("LSTM", lambda L: (L.zeros(5, 2, 3), lstm_hx(L, (1, 3, 4), (1, 3, 4)))),
    ("LSTM", lambda L: (L.zeros(5, 2, 3), lstm_hx(L, (2, 4), (2, 4)))),
    ("LSTM", lambda L: (L.zeros(5, 3), lstm_hx(L, (1, 2, 4), (1, 2, 4)))),
    ("LSTM", lambda L: (L.zeros(5, 2, 3, dtype=L.float64),)),
    ("GRU", lambda L: (L.zeros(5, 2, 3, dtype=L.int64),)),
    ("GRU", lambda L: (L.zeros(0, 2, 3),)),
    ("LSTM", lambda L: (L.zeros(0, 2, 3),)),
    ("RNN", lambda L: (L.zeros(0, 3),)),
]


@pytest.mark.parametrize("case", range(len(FORWARD_ERRORS)))
def test_forward_errors(torch, case):
    name, make = FORWARD_ERRORS[case]
    results = []
    for lib in (torch, ember):
        m = getattr(lib.nn, name)(3, 4)
        args = make(lib)
        results.append(raised(lambda: m(*args)))
    assert results[0] is not None
    assert results[1] == results[0]


def test_lstm_proj_hidden_size_error(torch):
    results = []
    for lib in (torch, ember):
        m = lib.nn.LSTM(3, 4, proj_size=2)
        results.append(raised(lambda: m(lib.zeros(5, 2, 3), lstm_hx(lib, (1, 2, 4),
                                                                       (1, 2, 4)))))
    assert results[0] is not None and results[1] == results[0]


def test_empty_batch(torch):
    em, tm = both_modules(torch, "GRU", "float32", 3, 4)
    e_out, e_h = em(ember.zeros(5, 0, 3))
    t_out, t_h = tm(torch.zeros(5, 0, 3))
    assert tuple(e_out.shape) == tuple(t_out.shape) and tuple(e_h.shape) == tuple(t_h.shape)


CELL_ERRORS = [
    (lambda L: L.zeros(2, 2, 3), None),
    (lambda L: L.zeros(2, 5), None),
    (lambda L: L.zeros(5), None),
    (lambda L: L.zeros(2, 3), lambda L: L.zeros(2, 2, 4)),
    (lambda L: L.zeros(2, 3), lambda L: L.zeros(3, 4)),
    (lambda L: L.zeros(2, 3), lambda L: L.zeros(2, 5)),
    (lambda L: L.zeros(2, 3), lambda L: L.zeros(4)),
    (lambda L: L.zeros(3), lambda L: L.zeros(2, 4)),
]


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("case", range(len(CELL_ERRORS)))
def test_cell_errors(torch, name, case):
    make_x, make_h = CELL_ERRORS[case]
    results = []
    for lib in (torch, ember):
        m = getattr(lib.nn, name)(3, 4)
        args = [make_x(lib)]
        if make_h is not None:
            h = make_h(lib)
            args.append((h, h) if name == "LSTMCell" else h)
        results.append(raised(lambda: m(*args)))
    assert results[0] is not None
    assert results[1] == results[0]


def test_cell_lstm_hidden_state_errors(torch):
    results = []
    for lib in (torch, ember):
        m = lib.nn.LSTMCell(3, 4)
        results.append([
            raised(lambda: m(lib.zeros(2, 3), (lib.zeros(2, 4), lib.zeros(3, 4)))),
            raised(lambda: m(lib.zeros(2, 3), (lib.zeros(2, 4), lib.zeros(2, 5)))),
            raised(lambda: m(lib.zeros(2, 3), (lib.zeros(2, 4), lib.zeros(2, 2, 4)))),
            raised(lambda: m(lib.zeros(2, 3), (lib.zeros(2, 4),))),
        ])
        results[-1].append(raised(
            lambda: lib.nn.RNNCell(3, 4, nonlinearity="foo")(lib.zeros(2, 3))))
    assert None not in results[0]
    assert results[1] == results[0]


# --------------------------------------------------------------------------- packed sequences


def R(lib):
    return lib.nn.utils.rnn


@pytest.mark.parametrize("bidirectional,num_layers", [(False, 1), (True, 1), (True, 2)])
@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_packed_sequence_through_layers(torch, mode, bidirectional, num_layers):
    name, kw = mode
    lengths_cases = [([4, 3, 3, 1], True, False, True), ([2, 4, 1, 3], False, True, False)]
    for lengths, enforce_sorted, batch_first, with_hx in lengths_cases:
        for dtype in ("float32", "float64"):
            em, tm = both_modules(torch, name, dtype, INPUT, HIDDEN, num_layers=num_layers,
                                  bidirectional=bidirectional, **kw)
            batch = len(lengths)
            x = RNG.standard_normal((batch, T, INPUT) if batch_first else (T, batch, INPUT))
            hs = [RNG.standard_normal(s[:1] + (batch,) + s[2:])
                  for s in hidden_shapes(name, kw, num_layers, bidirectional, True)]
            results = []
            for lib, m in ((ember, em), (torch, tm)):
                inputs = [leaf(lib, x, dtype)]
                packed = R(lib).pack_padded_sequence(inputs[0], lengths, batch_first=batch_first,
                                                     enforce_sorted=enforce_sorted)
                args = [packed]
                if with_hx:
                    inputs += [leaf(lib, h, dtype) for h in hs]
                    args.append(tuple(inputs[1:]) if name == "LSTM" else inputs[1])
                out, hidden = m(*args)
                assert out.batch_sizes.tolist() == packed.batch_sizes.tolist()
                padded, lens = R(lib).pad_packed_sequence(out, batch_first=batch_first,
                                                          total_length=T + 1)
                results.append(((padded, hidden), inputs, out, lens))
            (e_res, e_in, e_packed, e_lens), (t_res, t_in, t_packed, t_lens) = results
            assert e_lens.tolist() == t_lens.tolist() == lengths
            assert type(e_packed.data.grad_fn).__name__ == type(t_packed.data.grad_fn).__name__
            check_same(torch, em, tm, e_res, t_res, e_in, t_in, dtype,
                       grad_fn=dtype == "float64")


def test_pack_and_pad_match_pytorch(torch):
    x = RNG.standard_normal((4, 3, 2))
    for lengths, batch_first, enforce_sorted in [([4, 2, 1], False, True),
                                                 ([1, 4, 2], False, False),
                                                 ([2, 3, 2, 1], True, False)]:
        results = []
        for lib in (ember, torch):
            xi = lib.tensor(x, requires_grad=True)
            p = R(lib).pack_padded_sequence(xi, lib.tensor(lengths), batch_first=batch_first,
                                            enforce_sorted=enforce_sorted)
            padded, lens = R(lib).pad_packed_sequence(p, batch_first=batch_first,
                                                      padding_value=-1.5)
            (padded * lib.tensor(np.arange(padded.numel()).reshape(padded.shape))).sum() \
                .backward()
            # PyTorch's data carries PackPaddedSequenceBackward0, ember's CatBackward0
            results.append((repr(p._replace(data=p.data.detach())), repr(padded), repr(lens),
                            xi.grad.numpy(), type(padded.grad_fn).__name__))
        e, t = results
        assert e[:3] == t[:3]
        np.testing.assert_array_equal(e[3], t[3])
        assert e[4] == t[4]


def test_pad_sequence_matches_pytorch(torch):
    arrays = [RNG.standard_normal((n, 3)) for n in (2, 4, 1)]
    for batch_first, padding_side, value in itertools.product([False, True], ["right", "left"],
                                                              [0.0, -2.0]):
        results = []
        for lib in (ember, torch):
            seqs = [lib.tensor(a, requires_grad=True) for a in arrays]
            out = R(lib).pad_sequence(seqs, batch_first=batch_first, padding_value=value,
                                      padding_side=padding_side)
            (out * lib.tensor(np.arange(out.numel()).reshape(out.shape))).sum().backward()
            results.append((repr(out), [s.grad.numpy() for s in seqs]))
        assert results[0][0] == results[1][0]
        for a, b in zip(results[0][1], results[1][1]):
            np.testing.assert_array_equal(a, b)
    for lib_pair in [(ember, torch)]:
        e, t = (repr(R(lib).pad_sequence([lib.tensor([1, 2]), lib.tensor([3])],
                                         batch_first=True)) for lib in lib_pair)
        assert e == t
        e, t = (repr(R(lib).pad_sequence(lib.tensor(np.arange(6.0).reshape(2, 3))))
                for lib in lib_pair)
        assert e == t


def test_pack_sequence_unpack_and_unpad(torch):
    seqs = [[1.0, 2.0, 3.0], [4.0], [5.0, 6.0]]
    results = []
    for lib in (ember, torch):
        ts = [lib.tensor(s) for s in seqs]
        packed = R(lib).pack_sequence(ts, enforce_sorted=False)
        sorted_packed = R(lib).pack_sequence([ts[0], ts[2], ts[1]])
        padded, lengths = R(lib).pad_packed_sequence(packed)
        results.append((repr(packed), repr(sorted_packed),
                        repr(R(lib).unpack_sequence(packed)),
                        repr(R(lib).unpad_sequence(padded, lengths)),
                        repr(R(lib).invert_permutation(lib.tensor([2, 0, 3, 1]))),
                        R(lib).invert_permutation(None)))
    assert results[0] == results[1]


def test_packed_sequence_conversions():
    p = R(ember).pack_sequence([ember.tensor([1.0, 2.0]), ember.tensor([3.0])])
    q = p.double()
    assert q.data.dtype == ember.float64 and q.batch_sizes is p.batch_sizes
    assert p.to(ember.float32) is p and p.cpu() is p
    assert not p.is_cuda and not p.is_pinned()
    assert p.long().data.dtype == ember.int64
    assert isinstance(q, R(ember).PackedSequence) and isinstance(q, tuple)
    from_pair = R(ember).PackedSequence((p.data, p.batch_sizes))
    assert from_pair.data is p.data and from_pair.unsorted_indices is None


PACK_ERRORS = [
    lambda L: R(L).pack_padded_sequence(L.zeros(4, 3, 2), [1, 2, 4]),
    lambda L: R(L).pack_padded_sequence(L.zeros(4, 3, 2), [4, 2]),
    lambda L: R(L).pack_padded_sequence(L.zeros(4, 3, 2), [4, 2, 0]),
    lambda L: R(L).pack_padded_sequence(L.zeros(4, 3, 2), L.tensor([[4, 2, 1]])),
    lambda L: R(L).pack_padded_sequence(L.zeros(0, 3, 2), [4, 2, 1]),
    lambda L: R(L).pad_packed_sequence(R(L).pack_sequence([L.zeros(4), L.zeros(2)]),
                                       total_length=2),
    lambda L: R(L).pad_sequence([]),
    lambda L: R(L).pad_sequence(3),
    lambda L: R(L).pad_sequence([L.zeros(2, 3), L.zeros(3, 4)]),
    lambda L: R(L).pad_sequence([L.zeros(2, 3), L.zeros(3, 3)], padding_side="middle"),
    lambda L: R(L).PackedSequence([L.zeros(2)]),
]


@pytest.mark.parametrize("case", range(len(PACK_ERRORS)))
def test_pack_and_pad_errors(torch, case):
    expected = raised(lambda: PACK_ERRORS[case](torch))
    assert expected is not None
    assert raised(lambda: PACK_ERRORS[case](ember)) == expected
