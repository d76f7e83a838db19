"""ember.save / ember.load: round trips, and no code execution from crafted files."""
import collections
import io
import pickle
import zipfile

import numpy as np
import pytest

import ember
from ember import optim

torch = pytest.importorskip("torch")

EXECUTED = []


def _mark(what):
    EXECUTED.append(what)


class _Payload:
    """Unpickling this runs code (appends to EXECUTED): what a malicious checkpoint does."""

    def __reduce__(self):
        return (_mark, ("pwned",))


def _model_state():
    g = ember.Generator().manual_seed(0)
    return collections.OrderedDict([
        ("fc1.weight", ember.randn(4, 3, generator=g)),
        ("fc1.bias", ember.zeros(4)),
        ("bn.running_mean", ember.rand(4, dtype=ember.float64, generator=g)),
        ("bn.num_batches_tracked", ember.tensor(7)),
        ("mask", ember.tensor([True, False])),
        ("scalar", ember.tensor(3.5)),
        ("half", ember.ones(2, dtype=ember.float16)),
        ("bytes", ember.arange(5, dtype=ember.uint8)),
    ])


def _assert_same(a, b):
    assert type(a) is type(b)
    if isinstance(a, ember.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape and a.requires_grad == b.requires_grad
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _assert_same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, float) and a != a:
        assert b != b
    else:
        assert a == b


@pytest.mark.parametrize("target", ["path", "str", "fileobj"])
def test_model_state_round_trip(tmp_path, target):
    sd = _model_state()
    path = tmp_path / "model.pt"  # no .npz suffix is added to the name
    if target == "fileobj":
        buf = io.BytesIO()
        ember.save(sd, buf)
        buf.seek(0)
        out = ember.load(buf)
    else:
        ember.save(sd, path if target == "path" else str(path))
        assert path.exists() and not (tmp_path / "model.pt.npz").exists()
        out = ember.load(path if target == "path" else str(path), map_location="cpu")
    _assert_same(sd, out)
    assert isinstance(out, collections.OrderedDict)
    out["fc1.bias"].add_(1)  # loaded tensors own their memory
    assert sd["fc1.bias"].sum().item() == 0


def test_nested_structures_round_trip(tmp_path):
    shared = ember.ones(3, requires_grad=True)
    obj = {
        "epoch": 12, "loss": 0.25, "best": float("inf"), "nan": float("nan"), "name": "run-1",
        "flag": True, "none": None, 3: "int key", (1, "a"): "tuple key",
        "list": [1, [2.0, "x"], (shared, shared)], "tuple": (1, (2, 3)),
        "array": np.arange(6, dtype=np.int32).reshape(2, 3), "np_scalar": np.float32(1.5),
        "empty": {}, "empty_list": [], "empty_tensor": ember.zeros(0, 3),
    }
    ember.save(obj, tmp_path / "x.ckpt")
    out = ember.load(tmp_path / "x.ckpt")
    _assert_same(obj, out)
    assert out["list"][2][0] is out["list"][2][1]  # shared tensors stay shared


@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.1, momentum=0.9)),
                                         ("Adam", dict(lr=0.01, amsgrad=True)),
                                         ("RMSprop", dict(centered=True, momentum=0.5)),
                                         ("Adagrad", dict(lr_decay=0.1))])
def test_optimizer_state_round_trip(tmp_path, name, kwargs):
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(3).astype(np.float32) for _ in range(10)]

    def train(p, opt, gs):
        for g in gs:
            p.grad = ember.tensor(g)
            opt.step()

    ref = ember.zeros(3, requires_grad=True)
    ref_opt = getattr(optim, name)([ref], **kwargs)
    train(ref, ref_opt, grads)

    p = ember.zeros(3, requires_grad=True)
    opt = getattr(optim, name)([p], **kwargs)
    train(p, opt, grads[:5])
    ember.save({"model": {"p": p.detach()}, "optim": opt.state_dict()}, tmp_path / "ckpt")
    ck = ember.load(tmp_path / "ckpt")
    _assert_same(opt.state_dict(), ck["optim"])
    assert isinstance(ck["optim"]["param_groups"][0]["params"], list)
    q = ember.tensor(ck["model"]["p"].numpy(), requires_grad=True)
    opt2 = getattr(optim, name)([q], **kwargs)
    opt2.load_state_dict(ck["optim"])
    train(q, opt2, grads[5:])
    np.testing.assert_allclose(q.detach().numpy(), ref.detach().numpy(), rtol=1e-6)


def test_map_location_callable_and_dict(tmp_path):
    ember.save({"w": ember.ones(2)}, tmp_path / "f")
    seen = []
    out = ember.load(tmp_path / "f", map_location=lambda t, loc: seen.append(loc) or t)
    assert seen == ["cpu"] and out["w"].tolist() == [1.0, 1.0]
    assert ember.load(tmp_path / "f", map_location={"cpu": "cpu"})["w"].device.type == "cpu"
    assert ember.load(tmp_path / "f", map_location=ember.device("cpu"))["w"].sum().item() == 2


def test_unsupported_objects_are_refused(tmp_path):
    with pytest.raises(TypeError, match="ember.save can only store"):
        ember.save({"f": lambda x: x}, tmp_path / "bad")
    with pytest.raises(TypeError):
        ember.save({"o": np.array([object()])}, tmp_path / "bad2")


def _crafted_files(tmp_path):
    """Files that would run code if unpickled."""
    files = {}
    raw = tmp_path / "raw.pkl"
    raw.write_bytes(pickle.dumps({"w": _Payload()}))
    files["raw pickle"] = raw

    tfile = tmp_path / "torch.pt"
    torch.save({"w": torch.ones(2), "evil": _Payload()}, tfile)
    files["torch.save zip"] = tfile

    # a well-formed ember manifest that points at a member holding a pickled object array
    obj_arr = np.empty(1, dtype=object)
    obj_arr[0] = _Payload()
    member = io.BytesIO()
    np.save(member, obj_arr, allow_pickle=True)
    good = io.BytesIO()
    ember.save({"w": ember.ones(2)}, good)
    evil = tmp_path / "evil.npz"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(evil, "w") as dst:
        for info in src.infolist():
            data = member.getvalue() if info.filename == "a0.npy" else src.read(info)
            dst.writestr(info.filename, data)
    files["npz with pickled member"] = evil

    # a single .npy holding a pickled object array
    npy = tmp_path / "evil.npy"
    np.save(npy, obj_arr, allow_pickle=True)
    files["npy object array"] = npy
    return files


def test_crafted_pickle_payloads_never_execute(tmp_path):
    EXECUTED.clear()
    # sanity: the payload really does run when unpickled
    pickle.loads(pickle.dumps(_Payload()))
    assert EXECUTED == ["pwned"]
    EXECUTED.clear()
    for label, path in _crafted_files(tmp_path).items():
        with pytest.raises(RuntimeError, match="ember.load"):
            ember.load(path)
        with open(path, "rb") as fh, pytest.raises(RuntimeError, match="ember.load"):
            ember.load(fh)
        assert EXECUTED == [], label


def test_garbage_and_malformed_manifest(tmp_path):
    junk = tmp_path / "junk"
    junk.write_bytes(b"not a checkpoint at all")
    with pytest.raises(RuntimeError, match="ember.load"):
        ember.load(junk)
    bad = tmp_path / "bad.npz"
    with open(bad, "wb") as fh:
        np.savez(fh, __ember_manifest__=np.array('{"format": "ember-npz-1", '
                                                   '"root": {"tensor": "zz", '
                                                   '"requires_grad": false}}'))
    with pytest.raises(RuntimeError, match="malformed"):
        ember.load(bad)
