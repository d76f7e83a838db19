"""``ember.nn`` modules, parameters, init and utils, compared with PyTorch."""
import math
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import ember
import ember.nn as enn

from ..oracle import same_error

torch = pytest.importorskip("torch")
tnn = torch.nn

RNG = np.random.default_rng(0)


def e(t):
    return ember.tensor(t.detach().numpy())


def load(em, tm):
    em.load_state_dict(OrderedDict((k, e(v)) for k, v in tm.state_dict().items()))


def both(build):
    """The same layer in ember and torch, torch's initial state loaded into ember's."""
    tm = build(tnn)
    em = build(enn)
    load(em, tm)
    return em, tm


def compare(em, tm, inputs, *, atol=1e-5, rtol=1e-4):
    """Same inputs: outputs, input gradients and parameter gradients must agree."""
    t_in = [torch.tensor(x, requires_grad=x.dtype.kind == "f") for x in inputs]
    e_in = [ember.tensor(x, requires_grad=x.dtype.kind == "f") for x in inputs]
    t_out = tm(*t_in)
    e_out = em(*e_in)
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), atol=atol,
                               rtol=rtol)
    if not t_out.requires_grad:
        return
    w = RNG.standard_normal(tuple(t_out.shape)).astype(np.float32)
    (t_out * torch.tensor(w)).sum().backward()
    (e_out * ember.tensor(w)).sum().backward()
    for ti, ei in zip(t_in, e_in):
        if ti.grad is not None:
            np.testing.assert_allclose(ei.grad.numpy(), ti.grad.numpy(), atol=atol, rtol=rtol)
    t_params = dict(tm.named_parameters())
    for name, p in em.named_parameters():
        tg = t_params[name].grad
        if tg is None:
            assert p.grad is None, name
        else:
            np.testing.assert_allclose(p.grad.numpy(), tg.numpy(), atol=atol, rtol=rtol,
                                       err_msg=name)
    for name, b in tm.named_buffers():
        np.testing.assert_allclose(em.get_buffer(name).numpy() if hasattr(em, "get_buffer")
                                   else dict(em.named_buffers())[name].numpy(),
                                   b.numpy(), atol=atol, rtol=rtol, err_msg=name)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------------- Parameter
def test_parameter_repr_and_flags():
    p = enn.Parameter(ember.tensor([1.0, 2.0]))
    assert repr(p) == repr(tnn.Parameter(torch.tensor([1.0, 2.0])))
    assert p.requires_grad and p.is_leaf and isinstance(p, ember.Tensor)
    q = enn.Parameter(ember.tensor([1.0]), requires_grad=False)
    assert repr(q) == repr(tnn.Parameter(torch.tensor([1.0]), requires_grad=False))
    assert not q.requires_grad
    assert type(p * 2) is ember.Tensor


def test_parameter_shares_storage():
    t = ember.zeros(3)
    p = enn.Parameter(t)
    t.add_(1)
    assert p.tolist() == [1.0, 1.0, 1.0]


def test_parameter_int_refused():
    with pytest.raises(RuntimeError) as te:
        tnn.Parameter(torch.tensor([1]))
    with pytest.raises(RuntimeError) as ee:
        enn.Parameter(ember.tensor([1]))
    assert str(ee.value) == str(te.value)


# ---------------------------------------------------------------------- Module
class Net:
    @staticmethod
    def build(nn):
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)
                self.act = nn.ReLU()
                self.register_buffer("scale", (torch if nn is tnn else ember).ones(3))
                self.register_buffer("tmp", (torch if nn is tnn else ember).zeros(1),
                                     persistent=False)

            def forward(self, x):
                return self.act(self.fc(x)) * self.scale

        class Top(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()
                self.head = nn.Sequential(nn.Linear(3, 2), nn.Tanh())
                self.extra = nn.Parameter((torch if nn is tnn else ember).zeros(2))

            def forward(self, x):
                return self.head(self.block(x)) + self.extra

        return Top()


def test_module_registration_and_iteration():
    em, tm = both(Net.build)
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in em.named_buffers()] == [n for n, _ in tm.named_buffers()]
    assert [n for n, _ in em.named_modules()] == [n for n, _ in tm.named_modules()]
    assert [n for n, _ in em.named_children()] == [n for n, _ in tm.named_children()]
    assert len(list(em.parameters())) == len(list(tm.parameters()))
    assert len(list(em.modules())) == len(list(tm.modules()))
    assert list(em.state_dict().keys()) == list(tm.state_dict().keys())
    assert repr(em) == repr(tm)
    compare(em, tm, [randn(5, 4)])


def test_state_dict_detached_and_round_trip():
    em, tm = both(Net.build)
    sd = em.state_dict()
    assert isinstance(sd, OrderedDict)
    assert all(not v.requires_grad for v in sd.values())
    em2 = Net.build(enn)
    res = em2.load_state_dict(sd)
    assert repr(res) == repr(tm.load_state_dict(tm.state_dict())) == "<All keys matched " \
        "successfully>"
    for k, v in em2.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), sd[k].numpy())


def _load_errors(em, tm, mutate, strict=True):
    t_sd = mutate(OrderedDict(tm.state_dict()), torch)
    e_sd = mutate(OrderedDict((k, e(v)) for k, v in tm.state_dict().items()), ember)
    before = {k: v.numpy().copy() for k, v in em.state_dict().items()}
    with pytest.raises(RuntimeError) as te:
        tm.load_state_dict(t_sd, strict=strict)
    with pytest.raises(RuntimeError) as ee:
        em.load_state_dict(e_sd, strict=strict)
    assert str(ee.value) == str(te.value)
    for k, v in em.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k])


def test_load_state_dict_errors():
    def missing(sd, lib):
        del sd["block.fc.bias"]
        del sd["extra"]
        return sd

    def unexpected(sd, lib):
        sd["foo"] = lib.zeros(1)
        sd["head.0.zzz"] = lib.zeros(1)
        return sd

    def both_kinds(sd, lib):
        sd = missing(sd, lib)
        sd["block.fc.weight"] = lib.zeros(2, 2)
        return unexpected(sd, lib)

    def size(sd, lib):
        sd["block.fc.weight"] = lib.zeros(3, 5)
        sd["block.fc.bias"] = lib.zeros(3) + 7
        return sd

    for mutate in (missing, unexpected, both_kinds, size):
        tm = Net.build(tnn)
        em = Net.build(enn)
        _load_errors(em, tm, mutate)
    tm, em = Net.build(tnn), Net.build(enn)
    _load_errors(em, tm, size, strict=False)


def test_load_state_dict_non_strict():
    em, tm = both(Net.build)
    t_sd = OrderedDict(tm.state_dict())
    del t_sd["extra"]
    t_sd["foo"] = torch.zeros(1)
    e_sd = OrderedDict((k, e(v)) for k, v in t_sd.items())
    tr = tm.load_state_dict(t_sd, strict=False)
    er = em.load_state_dict(e_sd, strict=False)
    assert er.missing_keys == tr.missing_keys and er.unexpected_keys == tr.unexpected_keys
    assert repr(er) == repr(tr)


def test_train_eval_zero_grad_requires_grad():
    em, tm = both(Net.build)
    assert em.training
    assert em.eval() is em
    assert not em.training and not em.block.fc.training
    em.train()
    assert em.head[0].training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        em.train(1)
    em(ember.ones(2, 4)).sum().backward()
    assert em.block.fc.weight.grad is not None
    em.zero_grad(set_to_none=False)
    assert em.block.fc.weight.grad.abs().sum().item() == 0
    em.zero_grad()
    assert all(p.grad is None for p in em.parameters())
    em.requires_grad_(False)
    assert not any(p.requires_grad for p in em.parameters())


def test_setattr_rules_and_errors():
    m = enn.Linear(2, 2)
    tm_ = tnn.Linear(2, 2)
    for mod in (m, tm_):
        mod.foo = 3
        assert "foo" not in mod._parameters
    with pytest.raises(TypeError) as te:
        tm_.weight = torch.zeros(2, 2)
    with pytest.raises(TypeError) as ee:
        m.weight = ember.zeros(2, 2)
    assert str(ee.value) == str(te.value)
    with pytest.raises(AttributeError) as te:
        _ = tm_.nope
    with pytest.raises(AttributeError) as ee:
        _ = m.nope
    assert str(ee.value) == str(te.value)
    with pytest.raises(KeyError) as te:
        tm_.register_buffer("a.b", None)
    with pytest.raises(KeyError) as ee:
        m.register_buffer("a.b", None)
    assert str(ee.value) == str(te.value)
    m.bias = None
    assert m.bias is None and "bias" in m._parameters
    del m.weight
    assert "weight" not in m._parameters


def test_hooks_apply_and_dtype_moves():
    m = enn.Linear(3, 2)
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append(out.shape) or out + 1)
    out = m(ember.ones(4, 3))
    np.testing.assert_allclose(out.detach().numpy(), (m.bias + 1).detach().numpy()
                               .reshape(1, 2).repeat(4, 0), rtol=1e-6)
    assert calls == [ember.Size([4, 2])]
    h1.remove()
    h2.remove()
    np.testing.assert_allclose(m(ember.zeros(1, 3)).detach().numpy(),
                               m.bias.detach().numpy()[None], rtol=1e-6)
    seen = []
    seq = enn.Sequential(enn.Linear(1, 1), enn.ReLU())
    seq.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "ReLU", "Sequential"]
    w = seq[0].weight
    assert seq.double() is seq
    assert seq[0].weight is w and w.dtype == ember.float64 and w.requires_grad
    seq.float()
    assert w.dtype == ember.float32
    seq.to(ember.float64)
    assert w.dtype == ember.float64
    seq.to("cpu").cpu()
    bn = enn.BatchNorm1d(2).double()
    assert bn.num_batches_tracked.dtype == ember.int64
    assert bn.running_mean.dtype == ember.float64


def test_pickle_and_deepcopy():
    import copy
    m = enn.Sequential(enn.Linear(2, 3), enn.ReLU())
    m2 = copy.deepcopy(m)
    assert isinstance(m2[0].weight, enn.Parameter)
    assert m2[0].weight is not m[0].weight
    np.testing.assert_array_equal(m2[0].weight.detach().numpy(), m[0].weight.detach().numpy())
    m3 = pickle.loads(pickle.dumps(m))
    assert isinstance(m3[0].weight, enn.Parameter) and m3[0].weight.requires_grad
    assert repr(m3) == repr(m)


# ---------------------------------------------------------------------- containers
def test_sequential_indexing():
    def build(nn):
        return nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1), nn.Sigmoid())
    em, tm = both(build)
    assert len(em) == 4
    assert repr(em[1:3]) == repr(tm[1:3])
    assert repr(em[-1]) == repr(tm[-1])
    with pytest.raises(IndexError) as te:
        tm[7]
    with pytest.raises(IndexError) as ee:
        em[7]
    assert str(ee.value) == str(te.value)
    em.append(enn.Identity())
    tm.append(tnn.Identity())
    assert repr(em) == repr(tm)
    del em[0]
    del tm[0]
    assert repr(em) == repr(tm)
    d = OrderedDict([("a", enn.Linear(1, 2)), ("b", enn.GELU("tanh"))])
    td = OrderedDict([("a", tnn.Linear(1, 2)), ("b", tnn.GELU("tanh"))])
    assert repr(enn.Sequential(d)) == repr(tnn.Sequential(td))


def test_module_list_and_dict():
    ml = enn.ModuleList([enn.Linear(2, 2) for _ in range(3)] + [enn.ReLU()])
    tl = tnn.ModuleList([tnn.Linear(2, 2) for _ in range(3)] + [tnn.ReLU()])
    assert repr(ml) == repr(tl)
    assert len(ml) == 4 and isinstance(ml[-1], enn.ReLU)
    assert len(list(ml.parameters())) == 6
    ml.append(enn.Tanh())
    assert len(ml) == 5
    assert repr(ml[1:3]) == repr(tl[1:3])
    md = enn.ModuleDict({"x": enn.Linear(1, 1), "y": enn.ReLU()})
    td = tnn.ModuleDict({"x": tnn.Linear(1, 1), "y": tnn.ReLU()})
    assert repr(md) == repr(td)
    assert list(md.keys()) == ["x", "y"] and "x" in md and len(md) == 2
    assert repr(enn.ModuleList()) == repr(tnn.ModuleList())


# ---------------------------------------------------------------------- layers
LAYERS = [
    ("Linear", lambda nn: nn.Linear(4, 3), [(5, 4)]),
    ("Linear-nobias", lambda nn: nn.Linear(4, 3, bias=False), [(2, 6, 4)]),
    ("Bilinear", lambda nn: nn.Bilinear(3, 4, 2), [(5, 3), (5, 4)]),
    ("Identity", lambda nn: nn.Identity(7, a=1), [(2, 3)]),
    ("Flatten", lambda nn: nn.Flatten(), [(2, 3, 4)]),
    ("Unflatten", lambda nn: nn.Unflatten(1, (2, 3)), [(4, 6)]),
    ("ReLU", lambda nn: nn.ReLU(), [(3, 4)]),
    ("LeakyReLU", lambda nn: nn.LeakyReLU(0.2), [(3, 4)]),
    ("ELU", lambda nn: nn.ELU(alpha=0.7), [(3, 4)]),
    ("GELU", lambda nn: nn.GELU(), [(3, 4)]),
    ("GELU-tanh", lambda nn: nn.GELU(approximate="tanh"), [(3, 4)]),
    ("SiLU", lambda nn: nn.SiLU(), [(3, 4)]),
    ("Mish", lambda nn: nn.Mish(), [(3, 4)]),
    ("Softplus", lambda nn: nn.Softplus(beta=2, threshold=3), [(3, 4)]),
    ("Sigmoid", lambda nn: nn.Sigmoid(), [(3, 4)]),
    ("Tanh", lambda nn: nn.Tanh(), [(3, 4)]),
    ("Softmax", lambda nn: nn.Softmax(dim=1), [(3, 4)]),
    ("LogSoftmax", lambda nn: nn.LogSoftmax(dim=-1), [(3, 4)]),
    ("Hardtanh", lambda nn: nn.Hardtanh(-0.5, 0.5), [(3, 4)]),
    ("ReLU6", lambda nn: nn.ReLU6(), [(3, 4)]),
    ("SELU", lambda nn: nn.SELU(), [(3, 4)]),
    ("CELU", lambda nn: nn.CELU(alpha=0.6), [(3, 4)]),
    ("GLU", lambda nn: nn.GLU(), [(3, 4)]),
    ("GLU-dim0", lambda nn: nn.GLU(dim=0), [(4, 3)]),
    ("Hardsigmoid", lambda nn: nn.Hardsigmoid(), [(3, 4)]),
    ("Hardswish", lambda nn: nn.Hardswish(), [(3, 4)]),
    ("LogSigmoid", lambda nn: nn.LogSigmoid(), [(3, 4)]),
    ("Softmin", lambda nn: nn.Softmin(dim=1), [(3, 4)]),
    ("Softshrink", lambda nn: nn.Softshrink(0.3), [(3, 4)]),
    ("Softsign", lambda nn: nn.Softsign(), [(3, 4)]),
    ("Tanhshrink", lambda nn: nn.Tanhshrink(), [(3, 4)]),
    ("Threshold", lambda nn: nn.Threshold(0.1, -2.0), [(3, 4)]),
    ("Hardshrink", lambda nn: nn.Hardshrink(0.4), [(3, 4)]),
    ("PReLU", lambda nn: nn.PReLU(), [(3, 4)]),
    ("PReLU-channels", lambda nn: nn.PReLU(3, init=0.1), [(2, 3, 4)]),
    ("PReLU-channels-4d", lambda nn: nn.PReLU(2), [(2, 2, 3, 3)]),
    ("RReLU-eval", lambda nn: nn.RReLU(0.1, 0.3).eval(), [(3, 4)]),
    ("Conv1d", lambda nn: nn.Conv1d(3, 4, 3, stride=2, padding=1), [(2, 3, 9)]),
    ("Conv2d", lambda nn: nn.Conv2d(3, 4, (3, 2), padding=1, dilation=(1, 2)), [(2, 3, 7, 6)]),
    ("Conv2d-groups", lambda nn: nn.Conv2d(4, 6, 3, groups=2, bias=False), [(1, 4, 5, 5)]),
    ("Conv2d-same", lambda nn: nn.Conv2d(2, 3, 4, padding="same"), [(1, 2, 6, 6)]),
    ("ConvTranspose2d", lambda nn: nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1,
                                                      output_padding=1), [(2, 3, 4, 4)]),
    ("MaxPool1d", lambda nn: nn.MaxPool1d(3, stride=2, padding=1), [(2, 3, 9)]),
    ("MaxPool2d", lambda nn: nn.MaxPool2d(2), [(2, 3, 6, 6)]),
    ("AvgPool1d", lambda nn: nn.AvgPool1d(2), [(2, 3, 8)]),
    ("AvgPool2d", lambda nn: nn.AvgPool2d(3, stride=2, padding=1), [(2, 3, 7, 7)]),
    ("AdaptiveAvgPool2d", lambda nn: nn.AdaptiveAvgPool2d((2, 3)), [(2, 3, 7, 8)]),
    ("BatchNorm1d", lambda nn: nn.BatchNorm1d(3), [(5, 3)]),
    ("BatchNorm1d-3d", lambda nn: nn.BatchNorm1d(3, momentum=0.3), [(5, 3, 4)]),
    ("BatchNorm2d", lambda nn: nn.BatchNorm2d(3), [(4, 3, 5, 5)]),
    ("BatchNorm2d-noaffine", lambda nn: nn.BatchNorm2d(3, affine=False, momentum=None),
     [(4, 3, 2, 2)]),
    ("LayerNorm", lambda nn: nn.LayerNorm((3, 4)), [(2, 3, 4)]),
    ("LayerNorm-nobias", lambda nn: nn.LayerNorm(4, bias=False, eps=1e-3), [(2, 4)]),
    ("GroupNorm", lambda nn: nn.GroupNorm(2, 4), [(3, 4, 5)]),
    ("GroupNorm-nobias", lambda nn: nn.GroupNorm(3, 6, bias=False), [(2, 6, 2, 2)]),
    ("BatchNorm1d-nobias", lambda nn: nn.BatchNorm1d(3, bias=False), [(4, 3)]),
    ("Dropout-eval", lambda nn: nn.Dropout(0.3).eval(), [(3, 4)]),
    ("Dropout1d-eval", lambda nn: nn.Dropout1d(0.3).eval(), [(2, 3, 4)]),
    ("Dropout2d-eval", lambda nn: nn.Dropout2d(inplace=True).eval(), [(2, 3, 4, 4)]),
    ("Dropout3d-eval", lambda nn: nn.Dropout3d(0.1).eval(), [(2, 3, 2, 2, 2)]),
    ("AlphaDropout-eval", lambda nn: nn.AlphaDropout(0.2).eval(), [(3, 4)]),
    ("FeatureAlphaDropout-eval", lambda nn: nn.FeatureAlphaDropout().eval(), [(2, 3, 4)]),
    ("ZeroPad1d", lambda nn: nn.ZeroPad1d((1, 2)), [(2, 3, 4)]),
    ("ZeroPad2d", lambda nn: nn.ZeroPad2d(2), [(2, 3, 4, 4)]),
    ("ZeroPad2d-crop", lambda nn: nn.ZeroPad2d((-1, 2, 0, 1)), [(3, 4, 4)]),
    ("ZeroPad3d", lambda nn: nn.ZeroPad3d((1, 0, 2, 1, 0, 1)), [(1, 2, 2, 3, 2)]),
    ("ConstantPad1d", lambda nn: nn.ConstantPad1d(2, 3.5), [(3, 4)]),
    ("ConstantPad2d", lambda nn: nn.ConstantPad2d((1, 0, 2, 1), -1), [(2, 2, 3, 3)]),
    ("ConstantPad3d", lambda nn: nn.ConstantPad3d(1, 0.5), [(1, 2, 2, 3, 2)]),
    ("ReflectionPad1d", lambda nn: nn.ReflectionPad1d((2, 1)), [(2, 3, 4)]),
    ("ReflectionPad2d", lambda nn: nn.ReflectionPad2d(1), [(2, 2, 3, 4)]),
    ("ReflectionPad3d", lambda nn: nn.ReflectionPad3d((1, 0, 1, 2, 0, 1)), [(1, 2, 2, 3, 3)]),
    ("ReplicationPad1d", lambda nn: nn.ReplicationPad1d(3), [(3, 4)]),
    ("ReplicationPad2d", lambda nn: nn.ReplicationPad2d((1, 2, 0, 3)), [(2, 2, 3, 3)]),
    ("ReplicationPad3d", lambda nn: nn.ReplicationPad3d(1), [(2, 2, 2, 2)]),
    ("CircularPad1d", lambda nn: nn.CircularPad1d(2), [(2, 3, 4)]),
    ("CircularPad2d", lambda nn: nn.CircularPad2d((1, 0, 2, 1)), [(2, 2, 3, 3)]),
    ("CircularPad3d", lambda nn: nn.CircularPad3d(1), [(1, 2, 2, 3, 2)]),
    ("PixelShuffle", lambda nn: nn.PixelShuffle(2), [(2, 8, 3, 2)]),
    ("PixelUnshuffle", lambda nn: nn.PixelUnshuffle(3), [(2, 1, 6, 3)]),
    ("Unfold", lambda nn: nn.Unfold((2, 3), dilation=(2, 1), padding=1, stride=2),
     [(2, 3, 5, 6)]),
    ("Fold", lambda nn: nn.Fold((4, 5), 2), [(2, 12, 12)]),
    ("Fold-options", lambda nn: nn.Fold(5, (2, 3), padding=(1, 0), stride=(2, 1)), [(6, 9)]),
    ("CosineSimilarity", lambda nn: nn.CosineSimilarity(), [(3, 4), (3, 4)]),
    ("CosineSimilarity-dim0", lambda nn: nn.CosineSimilarity(0, 1e-6), [(3, 4), (1, 4)]),
    ("PairwiseDistance", lambda nn: nn.PairwiseDistance(), [(3, 4), (3, 4)]),
    ("PairwiseDistance-p1", lambda nn: nn.PairwiseDistance(1.0, 1e-3, True), [(3, 4), (4,)]),
    ("Softmax2d", lambda nn: nn.Softmax2d(), [(2, 3, 2, 2)]),
    ("Softmax2d-unbatched", lambda nn: nn.Softmax2d(), [(3, 2, 4)]),
    ("InstanceNorm1d", lambda nn: nn.InstanceNorm1d(3), [(2, 3, 5)]),
    ("InstanceNorm1d-unbatched", lambda nn: nn.InstanceNorm1d(3, affine=True), [(3, 5)]),
    ("InstanceNorm2d-affine-stats", lambda nn: nn.InstanceNorm2d(
        3, affine=True, track_running_stats=True, momentum=0.3), [(2, 3, 4, 3)]),
    ("InstanceNorm2d-eval-stats", lambda nn: nn.InstanceNorm2d(
        3, track_running_stats=True).eval(), [(2, 3, 4, 3)]),
    ("InstanceNorm3d", lambda nn: nn.InstanceNorm3d(2, eps=1e-3, affine=True, bias=False),
     [(2, 2, 2, 3, 2)]),
    ("Conv3d", lambda nn: nn.Conv3d(4, 6, (3, 2, 3), stride=(2, 1, 1), padding=1,
                                    dilation=(1, 2, 1), groups=2), [(2, 4, 5, 4, 6)]),
    ("Conv3d-same-circular", lambda nn: nn.Conv3d(2, 3, 2, padding="same", bias=False,
                                                  padding_mode="circular"), [(2, 3, 4, 3)]),
    ("Conv3d-reflect", lambda nn: nn.Conv3d(2, 2, 3, padding=1, padding_mode="reflect"),
     [(1, 2, 3, 4, 3)]),
    ("ConvTranspose1d", lambda nn: nn.ConvTranspose1d(3, 4, 3, stride=2, padding=1,
                                                      output_padding=1), [(2, 3, 5)]),
    ("ConvTranspose1d-groups", lambda nn: nn.ConvTranspose1d(4, 2, 2, groups=2, bias=False,
                                                             dilation=2), [(4, 6)]),
]


def _perturb(tm):
    """Move parameters away from trivial initial values (ones / zeros) before comparing."""
    with torch.no_grad():
        for p in tm.parameters():
            p.add_(torch.tensor(randn(*p.shape)) * 0.1)


@pytest.mark.parametrize("name,build,shapes", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_matches_torch(name, build, shapes):
    tm = build(tnn)
    _perturb(tm)
    em = build(enn)
    load(em, tm)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    compare(em, tm, [randn(*s) for s in shapes])


def test_batchnorm_running_stats_and_eval():
    em, tm = both(lambda nn: nn.BatchNorm2d(3, momentum=0.2))
    for _ in range(3):
        compare(em, tm, [randn(4, 3, 2, 2) * 2 + 1])
    assert em.num_batches_tracked.item() == 3
    em.eval()
    tm.eval()
    compare(em, tm, [randn(4, 3, 2, 2)])
    with pytest.raises(ValueError) as te:
        tm(torch.zeros(2, 3))
    with pytest.raises(ValueError) as ee:
        em(ember.zeros(2, 3))
    assert str(ee.value) == str(te.value)


def test_embedding_padding_idx():
    em, tm = both(lambda nn: nn.Embedding(10, 4, padding_idx=2))
    assert repr(em) == repr(tm)
    assert em.weight[2].abs().sum().item() == 0
    idx = np.array([[1, 2, 3], [2, 9, 1]])
    t_out = tm(torch.tensor(idx))
    e_out = em(ember.tensor(idx))
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy())
    w = randn(*t_out.shape)
    (t_out * torch.tensor(w)).sum().backward()
    (e_out * ember.tensor(w)).sum().backward()
    np.testing.assert_allclose(em.weight.grad.numpy(), tm.weight.grad.numpy(), atol=1e-6)
    assert repr(enn.Embedding(5, 2, padding_idx=-1)) == repr(tnn.Embedding(5, 2,
                                                                          padding_idx=-1))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        enn.Embedding(5, 2, padding_idx=5)
    pre = enn.Embedding.from_pretrained(ember.ones(3, 2))
    assert not pre.weight.requires_grad and tuple(pre.weight.shape) == (3, 2)


def test_dropout_train():
    m = enn.Dropout(0.5)
    x = ember.ones(1000)
    y = m(x)
    vals = set(np.unique(y.numpy()).tolist())
    assert vals <= {0.0, 2.0}
    m.eval()
    assert m(x) is x or np.array_equal(m(x).numpy(), x.numpy())
    with pytest.raises(ValueError) as te:
        tnn.Dropout(1.5)
    with pytest.raises(ValueError) as ee:
        enn.Dropout(1.5)
    assert str(ee.value) == str(te.value)


# ---------------------------------------------------------------------- activations
ACTIVATION_REPRS = [
    lambda nn: nn.SELU(), lambda nn: nn.SELU(inplace=True), lambda nn: nn.CELU(),
    lambda nn: nn.CELU(0.5, inplace=True), lambda nn: nn.GLU(), lambda nn: nn.GLU(dim=0),
    lambda nn: nn.Hardsigmoid(), lambda nn: nn.Hardsigmoid(inplace=True),
    lambda nn: nn.Hardswish(), lambda nn: nn.Hardswish(inplace=True), lambda nn: nn.LogSigmoid(),
    lambda nn: nn.Softmin(), lambda nn: nn.Softmin(dim=1), lambda nn: nn.Softshrink(),
    lambda nn: nn.Softshrink(0.3), lambda nn: nn.Softsign(), lambda nn: nn.Tanhshrink(),
    lambda nn: nn.Threshold(0.1, 20), lambda nn: nn.Threshold(1, 2.5, inplace=True),
    lambda nn: nn.Hardshrink(), lambda nn: nn.Hardshrink(0.3), lambda nn: nn.PReLU(),
    lambda nn: nn.PReLU(num_parameters=3, init=0.1), lambda nn: nn.RReLU(),
    lambda nn: nn.RReLU(0.1, 0.3, inplace=True), lambda nn: nn.ReLU6(inplace=True),
    lambda nn: nn.Sequential(nn.Linear(2, 4), nn.PReLU(4), nn.GLU(), nn.Hardshrink(0.3)),
]


@pytest.mark.parametrize("build", ACTIVATION_REPRS)
def test_activation_repr(build):
    em, tm = build(enn), build(tnn)
    assert repr(em) == repr(tm)
    assert str(em) == str(tm)


def test_activation_modules_are_distinct_classes():
    """Each new module is its own class in ember too (isinstance tests in user code)."""
    assert not isinstance(enn.Hardshrink(), enn.Softshrink)
    assert not isinstance(enn.Softmin(), enn.Softmax)
    assert isinstance(enn.ReLU6(), enn.Hardtanh) == isinstance(tnn.ReLU6(), tnn.Hardtanh)


def test_prelu_parameter():
    m = enn.PReLU(3, init=0.1)
    t = tnn.PReLU(3, init=0.1)
    assert m.num_parameters == 3 and m.init == 0.1
    assert repr(m.weight) == repr(t.weight)
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    m64 = enn.PReLU(2, dtype=ember.float64)
    assert repr(m64.weight) == repr(tnn.PReLU(2, dtype=torch.float64).weight)
    # the slopes broadcast along dim 1; the weight's gradient sums over the other dims
    x = randn(2, 3, 4)
    em, tm = both(lambda nn: nn.PReLU(3))
    with torch.no_grad():
        tm.weight.copy_(torch.tensor([0.1, -0.5, 2.0]))
    load(em, tm)
    compare(em, tm, [x], atol=1e-6, rtol=1e-5)
    assert type(em(ember.tensor(x)).grad_fn).__name__ == "PreluKernelBackward0"
    # a 1-d input has one channel: only one slope fits
    errors = []
    for lib, nn in ((ember, enn), (torch, tnn)):
        with pytest.raises(RuntimeError) as info:
            nn.PReLU(3)(lib.ones(3))
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_rrelu_training_draws_slopes_in_bounds():
    ember.manual_seed(0)
    m = enn.RReLU(0.1, 0.3)
    x = ember.tensor(np.concatenate([-np.linspace(0.5, 2.0, 5000), np.linspace(0.01, 1.0, 5000)])
                     .astype(np.float32), requires_grad=True)
    y = m(x)
    assert type(y.grad_fn).__name__ == "RreluWithNoiseBackward0"
    slopes = (y[:5000] / x[:5000]).detach().numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert abs(slopes.mean() - 0.2) < 0.005 and slopes.std() > 0.05  # uniform: std 0.058
    np.testing.assert_array_equal(y[5000:].detach().numpy(), x[5000:].detach().numpy())
    y.sum().backward()  # the gradient is each element's slope (1 where the input is positive)
    np.testing.assert_allclose(x.grad[:5000].numpy(), slopes, rtol=1e-6)
    np.testing.assert_array_equal(x.grad[5000:].numpy(), 1.0)
    ember.manual_seed(0)
    np.testing.assert_array_equal(m(x).detach().numpy(), y.detach().numpy())  # seeded
    m.eval()  # the mean slope
    np.testing.assert_allclose(m(x)[:5000].detach().numpy(), x[:5000].detach().numpy() * 0.2,
                               rtol=1e-6)


def test_softmin_implicit_dim_warns_like_pytorch():
    messages, outs = [], []
    for lib, nn in ((ember, enn), (torch, tnn)):
        with pytest.warns(UserWarning) as record:
            outs.append(nn.Softmin()(lib.tensor([[1.0, 2.0, 0.5]])).numpy())  # dim 1
        messages.append(str(record[0].message))
    assert messages[0] == messages[1]
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6)
    np.testing.assert_allclose(outs[0].sum(1), [1.0], rtol=1e-6)


@pytest.mark.parametrize("build", [
    lambda nn: nn.SELU(inplace=True), lambda nn: nn.CELU(0.8, inplace=True),
    lambda nn: nn.Hardsigmoid(inplace=True), lambda nn: nn.Hardswish(inplace=True),
    lambda nn: nn.Threshold(0.2, -1.0, inplace=True), lambda nn: nn.RReLU(inplace=True).eval(),
    lambda nn: nn.ReLU6(inplace=True)])
def test_inplace_activation_modules(build):
    x = randn(3, 4) * 4
    outs = []
    for lib, nn in ((ember, enn), (torch, tnn)):
        a = lib.tensor(x, requires_grad=True)
        b = a * 1
        out = build(nn)(b)
        assert out is b
        out.sum().backward()
        outs.append((out.detach().numpy(), a.grad.numpy(), type(out.grad_fn).__name__))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-5, atol=1e-6)
    assert outs[0][2] == outs[1][2]


def _sorted_sets(msg):
    """Set literals in a message, their items sorted (a set's order varies between runs)."""
    import re
    return re.sub(r"\{([^}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", ")))
                  + "}", msg)


def test_conv_errors():
    for kw in ({"groups": 2}, {"padding": "bad"}, {"padding_mode": "x"}):
        with pytest.raises(ValueError) as te:
            tnn.Conv2d(3, 4, 3, **kw)
        with pytest.raises(ValueError) as ee:
            enn.Conv2d(3, 4, 3, **kw)
        assert _sorted_sets(str(ee.value)) == _sorted_sets(str(te.value))


# ---------------------------------------------------------------------- losses
def _targets(kind, shape):
    if kind == "class":
        return RNG.integers(0, shape[1], size=(shape[0],) + tuple(shape[2:]))
    if kind == "prob":
        return RNG.uniform(0.05, 0.95, size=shape).astype(np.float32)
    return randn(*shape)


LOSSES = [
    ("MSELoss", lambda nn, lib: nn.MSELoss(), "real", None),
    ("MSELoss-sum", lambda nn, lib: nn.MSELoss(reduction="sum"), "real", None),
    ("L1Loss-none", lambda nn, lib: nn.L1Loss(reduction="none"), "real", None),
    ("SmoothL1Loss", lambda nn, lib: nn.SmoothL1Loss(beta=0.5), "real", None),
    ("HuberLoss", lambda nn, lib: nn.HuberLoss(delta=0.7), "real", None),
    ("CrossEntropyLoss", lambda nn, lib: nn.CrossEntropyLoss(), "class", None),
    ("CrossEntropyLoss-w", lambda nn, lib: nn.CrossEntropyLoss(
        weight=lib.tensor([1.0, 2.0, 0.5, 1.5]), label_smoothing=0.1), "class", None),
    ("NLLLoss", lambda nn, lib: nn.NLLLoss(ignore_index=1), "class", "logsm"),
    ("BCELoss", lambda nn, lib: nn.BCELoss(), "prob", "sigmoid"),
    ("BCEWithLogitsLoss", lambda nn, lib: nn.BCEWithLogitsLoss(
        pos_weight=lib.tensor([1.0, 2.0, 3.0, 0.5])), "prob", None),
    ("KLDivLoss", lambda nn, lib: nn.KLDivLoss(reduction="sum"), "prob", "logsm"),
]


@pytest.mark.parametrize("name,build,kind,pre", LOSSES, ids=[c[0] for c in LOSSES])
def test_loss_matches_torch(name, build, kind, pre):
    tm, em = build(tnn, torch), build(enn, ember)
    assert repr(em) == repr(tm)
    x = randn(3, 4)
    tgt = _targets(kind, (3, 4))
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    ti, ei = tx, ex
    if pre == "sigmoid":
        ti, ei = tx.sigmoid(), ex.sigmoid()
    elif pre == "logsm":
        ti, ei = tx.log_softmax(1), ex.log_softmax(1)
    t_out = tm(ti, torch.tensor(tgt))
    e_out = em(ei, ember.tensor(tgt))
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), atol=1e-5,
                               rtol=1e-4)
    t_out.sum().backward()
    e_out.sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), atol=1e-5, rtol=1e-4)


# ---------------------------------------------------------------------- init
def test_calculate_gain():
    for args in (("linear",), ("relu",), ("tanh",), ("leaky_relu",), ("leaky_relu", 0.2),
                 ("selu",), ("sigmoid",), ("conv2d",)):
        assert enn.init.calculate_gain(*args) == tnn.init.calculate_gain(*args)
    with pytest.raises(ValueError) as te:
        tnn.init.calculate_gain("foo")
    with pytest.raises(ValueError) as ee:
        enn.init.calculate_gain("foo")
    assert str(ee.value) == str(te.value)


def _stats(t):
    a = t.detach().numpy().ravel()
    return a.min(), a.max(), a.mean(), a.std()


def test_init_distributions():
    init = enn.init
    w = ember.empty(400, 300)
    fan_in, fan_out = 300, 400
    init.uniform_(w, -2, 3)
    lo, hi, _, _ = _stats(w)
    assert -2 <= lo < -1.9 and 2.9 < hi <= 3
    init.normal_(w, 1.0, 0.5)
    _, _, mean, std = _stats(w)
    assert abs(mean - 1) < 0.01 and abs(std - 0.5) < 0.01
    init.xavier_uniform_(w, gain=2.0)
    bound = 2.0 * math.sqrt(6.0 / (fan_in + fan_out))
    lo, hi, _, _ = _stats(w)
    assert -bound <= lo < -0.99 * bound and 0.99 * bound < hi <= bound
    init.xavier_normal_(w)
    assert abs(_stats(w)[3] - math.sqrt(2.0 / (fan_in + fan_out))) < 0.002
    init.kaiming_uniform_(w, a=math.sqrt(5))
    bound = math.sqrt(6.0 / ((1 + 5) * fan_in))
    lo, hi, _, _ = _stats(w)
    assert -bound <= lo and hi <= bound and hi > 0.99 * bound
    init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(_stats(w)[3] - math.sqrt(2.0 / fan_out)) < 0.003
    init.constant_(w, 0.3)
    assert np.all(w.numpy() == np.float32(0.3))
    init.zeros_(w)
    assert w.abs().sum().item() == 0
    init.ones_(w)
    assert w.sum().item() == w.numel()
    q = ember.empty(3, 5)
    init.orthogonal_(q, gain=2)
    np.testing.assert_allclose((q @ q.T).numpy(), 4 * np.eye(3), atol=1e-5)
    with pytest.raises(ValueError) as te:
        tnn.init.xavier_uniform_(torch.empty(3))
    with pytest.raises(ValueError) as ee:
        init.xavier_uniform_(ember.empty(3))
    assert str(ee.value) == str(te.value)
    p = enn.Parameter(ember.empty(3, 3))
    init.normal_(p)
    assert p.requires_grad and p.grad_fn is None


def test_layer_default_init_bounds():
    lin = enn.Linear(50, 200)
    bound = 1 / math.sqrt(50)
    assert lin.weight.abs().max().item() <= bound + 1e-7
    assert lin.weight.abs().max().item() > 0.95 * bound
    assert lin.bias.abs().max().item() <= bound + 1e-7
    conv = enn.Conv2d(4, 64, 3)
    bound = 1 / math.sqrt(4 * 9)
    assert conv.weight.abs().max().item() <= bound + 1e-7
    assert conv.bias.abs().max().item() <= bound + 1e-7
    emb = enn.Embedding(300, 100)
    assert abs(emb.weight.detach().numpy().std() - 1) < 0.02
    ln = enn.LayerNorm(3)
    assert ln.weight.tolist() == [1.0] * 3 and ln.bias.tolist() == [0.0] * 3


# ---------------------------------------------------------------------- utils
def _grad_pair():
    tm = tnn.Sequential(tnn.Linear(3, 4), tnn.Tanh(), tnn.Linear(4, 2))
    em = enn.Sequential(enn.Linear(3, 4), enn.Tanh(), enn.Linear(4, 2))
    load(em, tm)
    x = randn(5, 3)
    (tm(torch.tensor(x)) ** 2).sum().backward()
    (em(ember.tensor(x)) ** 2).sum().backward()
    return em, tm


@pytest.mark.parametrize("norm_type", [2.0, 1, float("inf")])
def test_clip_grad_norm(norm_type):
    em, tm = _grad_pair()
    tn = tnn.utils.clip_grad_norm_(tm.parameters(), 0.5, norm_type=norm_type)
    en = enn.utils.clip_grad_norm_(em.parameters(), 0.5, norm_type=norm_type)
    np.testing.assert_allclose(en.item(), tn.item(), rtol=1e-5)
    for pe, pt in zip(em.parameters(), tm.parameters()):
        np.testing.assert_allclose(pe.grad.numpy(), pt.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_clip_grad_value_and_vectors():
    em, tm = _grad_pair()
    tnn.utils.clip_grad_value_(tm.parameters(), 0.1)
    enn.utils.clip_grad_value_(em.parameters(), 0.1)
    for pe, pt in zip(em.parameters(), tm.parameters()):
        np.testing.assert_allclose(pe.grad.numpy(), pt.grad.numpy(), rtol=1e-5, atol=1e-7)
    tv = tnn.utils.parameters_to_vector(tm.parameters())
    ev = enn.utils.parameters_to_vector(em.parameters())
    np.testing.assert_allclose(ev.detach().numpy(), tv.detach().numpy())
    new = randn(ev.numel())
    tnn.utils.vector_to_parameters(torch.tensor(new), tm.parameters())
    enn.utils.vector_to_parameters(ember.tensor(new), em.parameters())
    for pe, pt in zip(em.parameters(), tm.parameters()):
        np.testing.assert_array_equal(pe.detach().numpy(), pt.detach().numpy())
        assert isinstance(pe, enn.Parameter)
    with pytest.raises(TypeError) as te:
        tnn.utils.vector_to_parameters([1.0], tm.parameters())
    with pytest.raises(TypeError) as ee:
        enn.utils.vector_to_parameters([1.0], em.parameters())
    assert str(ee.value) == str(te.value)


def test_factory_kwargs_shared_params_and_output_size():
    m = enn.Linear(3, 2, dtype=ember.float64)
    assert m.weight.dtype == ember.float64 and m.bias.dtype == ember.float64
    s = enn.Sequential(m, m)
    ts = tnn.Sequential(*(lambda lin: (lin, lin))(tnn.Linear(3, 2)))
    assert len(list(s.parameters())) == len(list(ts.parameters())) == 2
    assert list(s.state_dict()) == list(ts.state_dict())
    assert [n for n, _ in s.named_modules()] == [n for n, _ in ts.named_modules()]
    em, tm = both(lambda nn: nn.ConvTranspose2d(2, 3, 3, stride=2))
    x = randn(1, 2, 4, 4)
    t_out = tm(torch.tensor(x), output_size=[10, 10])
    e_out = em(ember.tensor(x), output_size=[10, 10])
    assert tuple(e_out.shape) == tuple(t_out.shape) == (1, 3, 10, 10)
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), atol=1e-5)
    assert repr(enn.Parameter()) == repr(tnn.Parameter())


def test_module_tree_repr_nested():
    def build(nn):
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.features = nn.Sequential(
                    nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(inplace=True),
                    nn.MaxPool2d(2), nn.Conv2d(4, 8, 3, stride=2, bias=False),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten())
                self.blocks = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])
                self.heads = nn.ModuleDict({"cls": nn.Linear(8, 10), "drop": nn.Dropout(0.1)})
                self.emb = nn.Embedding(5, 8, padding_idx=0)
                self.norm = nn.LayerNorm(8)
                self.loss = nn.CrossEntropyLoss()

            def forward(self, x):
                h = self.features(x)
                for b in self.blocks:
                    h = nn.functional.relu(b(h))
                return self.loss(self.heads["cls"](self.norm(h)), ember_or_torch(h).zeros(
                    h.shape[0], dtype=ember_or_torch(h).int64))
        return Net()

    def ember_or_torch(t):
        return ember if isinstance(t, ember.Tensor) else torch

    em, tm = both(build)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    compare(em, tm, [randn(2, 1, 8, 8)], atol=1e-4)


# ---------------------------------------------------------------------- ParameterList / Dict
def _raises_same(f):
    """``f(nn, lib)`` raises the same exception type and text in ember and PyTorch."""
    same_error(lambda lib: f(lib.nn, lib), torch)


def test_parameter_list():
    built = []
    for nn, lib in ((enn, ember), (tnn, torch)):
        pl = nn.ParameterList([nn.Parameter(lib.ones(3, 4)), lib.zeros(2, dtype=lib.float64)])
        assert isinstance(pl[1], nn.Parameter) and pl[1].requires_grad  # a plain tensor wraps
        pl.append(lib.ones(5))
        pl.extend([lib.ones(1, 2), "text"])
        pl += [None]
        pl[0] = lib.full((2, 2), 3.0)
        built.append(pl)
    epl, tpl = built
    assert repr(epl) == repr(tpl)
    assert repr(epl[1:4]) == repr(tpl[1:4]) and repr(epl[::-2]) == repr(tpl[::-2])
    assert len(epl) == len(tpl) == 6 and epl[-2] == "text" and epl[5] is None
    assert [n for n, _ in epl.named_parameters()] == [n for n, _ in tpl.named_parameters()]
    assert list(epl.state_dict()) == list(tpl.state_dict()) == ["0", "1", "2", "3"]
    assert [tuple(epl[i].shape) for i in range(4)] == [tuple(tpl[i].shape) for i in range(4)]
    assert repr(enn.ParameterList()) == repr(tnn.ParameterList())
    assert "0" not in dir(epl)
    _raises_same(lambda nn, lib: nn.ParameterList([lib.ones(1)])[1])
    _raises_same(lambda nn, lib: nn.ParameterList([lib.ones(1)])[-2])
    _raises_same(lambda nn, lib: nn.ParameterList().extend(lib.ones(2)))
    _raises_same(lambda nn, lib: nn.ParameterList().extend(3))
    _raises_same(lambda nn, lib: nn.ParameterList()(lib.ones(1)))


class _WithParams:
    """A module holding a ParameterList and a ParameterDict, in both libraries."""

    @staticmethod
    def build(nn, lib):
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.ws = nn.ParameterList([lib.tensor(randn(3, 2)), lib.tensor(randn(2, 2))])
                self.bs = nn.ParameterDict({"out": lib.tensor(randn(2)),
                                            "hidden": lib.tensor(randn(2))})

            def forward(self, x):
                h = (x @ self.ws[0] + self.bs["hidden"]).tanh()
                return h @ self.ws[1] + self.bs["out"]
        return M()


def test_parameter_containers_in_a_module():
    tm = _WithParams.build(tnn, torch)
    em = _WithParams.build(enn, ember)
    load(em, tm)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict()) == [
        "ws.0", "ws.1", "bs.hidden", "bs.out"]
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    compare(em, tm, [randn(4, 3)])
    em.zero_grad()
    assert all(p.grad is None for p in em.parameters())
    em.double()
    assert em.ws[0].dtype == ember.float64 and em.bs["out"].dtype == ember.float64
    assert isinstance(em.ws[0], enn.Parameter) and em.bs.out is em.bs["out"]


def test_parameter_dict():
    built = []
    for nn, lib in ((enn, ember), (tnn, torch)):
        pd = nn.ParameterDict({"b": lib.ones(2), "a": nn.Parameter(lib.zeros(3, 1)),
                               "s": "not a tensor"})  # a plain dict: sorted keys
        pd["c"] = lib.ones(1, dtype=lib.float64)
        pd.update([("d", lib.zeros(4)), ("a", lib.ones(3, 1))])
        pd.update(OrderedDict([("z", lib.ones(2)), ("y", lib.ones(2))]))
        built.append(pd)
    epd, tpd = built
    assert repr(epd) == repr(tpd)
    assert list(epd.keys()) == list(tpd.keys()) == ["a", "b", "s", "c", "d", "z", "y"]
    assert list(epd.state_dict()) == list(tpd.state_dict())
    assert isinstance(epd["c"], enn.Parameter) and epd["s"] == "not a tensor"
    assert "a" in epd and "q" not in epd and epd.get("q", 5) == 5 and len(epd) == 7
    assert list(reversed(epd)) == list(reversed(tpd))
    for pd in built:
        assert pd.pop("b").shape == (2,)
        k, v = pd.popitem()
        assert k == "y" and tuple(v.shape) == (2,)
        assert pd.setdefault("a") is pd["a"]
        assert pd.setdefault("new", None) is None
    assert repr(epd) == repr(tpd)
    assert list(epd.values())[0] is epd["a"] and dict(epd.items())["c"] is epd["c"]
    merged = [pd | type(pd)({"w": lib.ones(2)}) for pd, lib in zip(built, (ember, torch))]
    assert repr(merged[0]) == repr(merged[1])
    assert repr(epd.copy()) == repr(tpd.copy())
    assert repr(epd.fromkeys(["x", "y"])) == repr(tpd.fromkeys(["x", "y"]))
    epd.clear()
    assert len(epd) == 0 and list(epd.parameters()) == []
    assert repr(enn.ParameterDict()) == repr(tnn.ParameterDict())
    _raises_same(lambda nn, lib: nn.ParameterDict()[1])
    _raises_same(lambda nn, lib: nn.ParameterDict().update(3))
    _raises_same(lambda nn, lib: nn.ParameterDict().update([1]))
    _raises_same(lambda nn, lib: nn.ParameterDict().update([("a", 1, 2)]))
    _raises_same(lambda nn, lib: nn.ParameterDict()(lib.ones(1)))


# ---------------------------------------------------------------------- new layers: extras
def test_feature_dropout_modules_train():
    ember.manual_seed(0)
    y = enn.Dropout2d(0.5)(ember.ones(30, 40, 3, 3)).numpy().reshape(30, 40, 9)
    assert (y == y[..., :1]).all() and set(np.unique(y).tolist()) == {0.0, 2.0}
    assert abs((y == 0).mean() - 0.5) < 0.05
    y = enn.FeatureAlphaDropout(0.3)(ember.ones(30, 40, 4)).numpy()
    assert (y == y[..., :1]).all() and len(np.unique(y)) == 2
    m = enn.AlphaDropout(0.3).eval()
    x = ember.ones(3)
    assert m(x) is x
    for build in (lambda nn: nn.Dropout3d(1.5), lambda nn: nn.AlphaDropout(-1)):
        _raises_same(lambda nn, lib: build(nn))


def test_module_rank_warnings_and_errors():
    import warnings
    for call in (lambda nn, lib: nn.Dropout2d()(lib.ones(2, 3, 4)),
                 lambda nn, lib: nn.Dropout3d()(lib.ones(2, 3)),
                 lambda nn, lib: nn.InstanceNorm1d(4)(lib.ones(2, 3, 5))):
        messages = []
        for nn, lib in ((enn, ember), (tnn, torch)):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                call(nn, lib)
            messages.append([str(w.message) for w in caught])
        assert messages[0] == messages[1] and messages[0]
    _raises_same(lambda nn, lib: nn.InstanceNorm1d(4, affine=True)(lib.ones(2, 3, 5)))
    _raises_same(lambda nn, lib: nn.InstanceNorm2d(3)(lib.ones(2, 3)))
    _raises_same(lambda nn, lib: nn.InstanceNorm3d(3)(lib.ones(2, 3, 4)))
    _raises_same(lambda nn, lib: nn.InstanceNorm1d(3)(lib.ones(2, 3, 1)))
    _raises_same(lambda nn, lib: nn.Softmax2d()(lib.ones(2, 3)))
    _raises_same(lambda nn, lib: nn.CircularPad2d(1)(lib.ones(2, 3)))
    _raises_same(lambda nn, lib: nn.CircularPad1d(1)(lib.ones(1, 2, 3, 4)))
    _raises_same(lambda nn, lib: nn.ReflectionPad1d(4)(lib.ones(2, 3)))
    _raises_same(lambda nn, lib: nn.PixelShuffle(2)(lib.ones(1, 3, 2, 2)))
    _raises_same(lambda nn, lib: nn.Fold(3, 2)(lib.ones(1, 7, 4)))
    _raises_same(lambda nn, lib: nn.ConvTranspose1d(2, 3, 3, padding_mode="reflect"))
    _raises_same(lambda nn, lib: nn.ConvTranspose1d(2, 3, 3, stride=2)(
        lib.ones(1, 2, 4), output_size=[12]))


def test_instance_norm_running_stats_over_steps():
    em, tm = both(lambda nn: nn.InstanceNorm1d(3, affine=True, track_running_stats=True,
                                               momentum=None))
    for _ in range(3):
        compare(em, tm, [randn(4, 3, 5) * 2 + 1])
    assert em.num_batches_tracked.item() == tm.num_batches_tracked.item() == 0
    em.eval()
    tm.eval()
    compare(em, tm, [randn(4, 3, 5)])
    em, tm = both(lambda nn: nn.InstanceNorm2d(2, track_running_stats=True))
    for _ in range(2):
        compare(em, tm, [randn(2, 3, 3) + 2])  # unbatched input, stats updated as well


def test_conv_transpose1d_output_size_and_types():
    em, tm = both(lambda nn: nn.ConvTranspose1d(2, 3, 3, stride=2))
    x = randn(1, 2, 4)
    t_out = tm(torch.tensor(x), output_size=[10])
    e_out = em(ember.tensor(x), output_size=[10])
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), atol=1e-5)
    assert not isinstance(em, enn.ConvTranspose2d)
    assert type(e_out.grad_fn).__name__ == type(t_out.grad_fn).__name__
    assert repr(enn.ConvTranspose1d(4, 4, (2,), groups=2, dilation=3, output_padding=1,
                                    stride=2)) == \
        repr(tnn.ConvTranspose1d(4, 4, (2,), groups=2, dilation=3, output_padding=1, stride=2))
