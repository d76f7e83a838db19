"""ember.save / ember.load: round trips within ember, both ways with PyTorch's own files,
whole modules, map_location, and PyTorch's weights_only refusals (no code runs)."""
import collections
import io
import os
import pickle
import struct
import subprocess
import sys
import textwrap
import warnings
import zipfile

import numpy as np
import pytest

import ember
from ember import optim
from ember.serialization import CheckpointError

EXECUTED = []


def _mark(what):
    EXECUTED.append(what)


class _Payload:
    """Unpickling this runs code (appends to EXECUTED): what a malicious checkpoint does."""

    def __reduce__(self):
        return (_mark, ("pwned",))


class Holder:
    """A user class: pickled by reference, so weights_only refuses it (in both libraries)."""

    def __init__(self, value=None):
        self.value = value


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


def _saved(obj, lib=ember):
    buf = io.BytesIO()
    lib.save(obj, buf)
    return buf.getvalue()


# ------------------------------------------------------------------ within ember

@pytest.mark.parametrize("target", ["path", "str", "fileobj"])
def test_model_state_round_trip(tmp_path, target):
    sd = _model_state()
    path = tmp_path / "model.pt"
    if target == "fileobj":
        out = ember.load(io.BytesIO(_saved(sd)))
    else:
        ember.save(sd, path if target == "path" else str(path))
        assert path.exists() and not (tmp_path / "model.pt.npz").exists()
        out = ember.load(path if target == "path" else str(path), map_location="cpu")
    _assert_same(sd, out)
    assert isinstance(out, collections.OrderedDict)
    out["fc1.bias"].add_(1)  # loaded tensors have their own memory
    assert sd["fc1.bias"].sum().item() == 0


def test_nested_structures_round_trip():
    shared = ember.ones(3, requires_grad=True)
    obj = {
        "epoch": 12, "loss": 0.25, "best": float("inf"), "nan": float("nan"), "name": "run-1",
        "flag": True, "none": None, 3: "int key", (1, "a"): "tuple key", "set": {1, 2},
        "list": [1, [2.0, "x"], (shared, shared)], "tuple": (1, (2, 3)), "bytes": b"\x00\xff",
        "complex": 1 + 2j, "big": 10**30, "size": ember.Size([2, 3]), "dtype": ember.int16,
        "device": ember.device("cpu"), "empty": {}, "empty_list": [],
        "empty_tensor": ember.zeros(0, 3),
    }
    out = ember.load(io.BytesIO(_saved(obj)))
    _assert_same(obj, out)
    assert out["list"][2][0] is out["list"][2][1]  # shared tensors stay shared
    numpy_obj = {"array": np.arange(6, dtype=np.int32).reshape(2, 3), "s": np.float32(1.5)}
    data = _saved(numpy_obj)
    _assert_same(numpy_obj, ember.load(io.BytesIO(data), weights_only=False))
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        ember.load(io.BytesIO(data))  # NumPy objects are not weights, as in PyTorch


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


def test_views_share_their_storage_after_loading():
    base = ember.arange(24.0).reshape(4, 6)
    obj = {"base": base, "rows": base[1:3], "cols": base[:, ::2], "t": base.t(),
           "alone": ember.ones(2)}
    out = ember.load(io.BytesIO(_saved(obj)))
    for key in ("rows", "cols", "t"):
        assert out[key].stride() == obj[key].stride()
        assert out[key].storage_offset() == obj[key].storage_offset()
        np.testing.assert_array_equal(out[key].numpy(), obj[key].numpy())
    out["base"][1, 0] = -1.0  # a write through one shows through the others, as in PyTorch
    assert out["rows"][0, 0].item() == -1 and out["t"][0, 1].item() == -1
    assert not np.shares_memory(out["alone"].numpy(), out["base"].numpy())
    with zipfile.ZipFile(io.BytesIO(_saved(obj))) as zf:  # one storage for the four views
        assert sorted(n for n in zf.namelist() if "/data/" in n) == ["archive/data/0",
                                                                     "archive/data/1"]


def test_whole_module_round_trip():
    g = ember.Generator().manual_seed(3)
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4),
                                ember.nn.ReLU(), ember.nn.Linear(4, 2))
    model(ember.randn(8, 3, generator=g))  # running stats move
    model.eval()
    data = _saved(model)
    loaded = ember.load(io.BytesIO(data), weights_only=False)
    assert type(loaded) is ember.nn.Sequential and not loaded.training
    assert type(loaded[0].weight) is ember.nn.Parameter and loaded[0].weight.requires_grad
    x = ember.randn(5, 3, generator=g)
    np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL ember.nn.modules.container."
                                                     "Sequential was not an allowed global"):
        ember.load(io.BytesIO(data))


def test_map_location_forms():
    data = _saved({"w": ember.ones(2), "v": ember.arange(3.0)[1:]})
    seen = []
    out = ember.load(io.BytesIO(data), map_location=lambda s, loc: seen.append((s, loc)) or s)
    assert [loc for _, loc in seen] == ["cpu", "cpu"] and out["w"].tolist() == [1.0, 1.0]
    assert seen[1][0].shape == (3,)  # the callable sees each whole storage, flat
    doubled = ember.load(io.BytesIO(data), map_location=lambda s, loc: s * 2)
    assert doubled["v"].tolist() == [2.0, 4.0] and doubled["v"].storage_offset() == 1
    for where in ("cpu", ember.device("cpu"), {"cpu": "cpu"}, {"cuda:0": "cpu"}):
        assert ember.load(io.BytesIO(data), map_location=where)["v"].tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match="map_location returned list"):
        ember.load(io.BytesIO(data), map_location=lambda s, loc: [1])


def test_unpicklable_objects_raise_what_torch_raises(torch, tmp_path):
    def local():
        return 1

    for obj in ({"f": lambda x: x}, {"g": (i for i in range(2))}, [local]):
        with pytest.raises(Exception) as want:
            torch.save(obj, tmp_path / "t")
        with pytest.raises(type(want.value)) as got:
            ember.save(obj, tmp_path / "e")
        assert str(got.value) == str(want.value)


def test_legacy_ember_files_still_load(tmp_path):
    manifest = np.array('{"format": "ember-npz-1", "root": {"odict": [["w", {"tensor": "a0", '
                        '"requires_grad": true}], ["n", 3]]}}')
    path = tmp_path / "old.ckpt"
    with open(path, "wb") as fh:
        np.savez(fh, a0=np.arange(3, dtype=np.float32), __ember_manifest__=manifest)
    out = ember.load(path)
    assert list(out) == ["w", "n"] and out["n"] == 3 and out["w"].requires_grad
    assert out["w"].tolist() == [0.0, 1.0, 2.0]
    bad = tmp_path / "bad.npz"
    with open(bad, "wb") as fh:
        np.savez(fh, __ember_manifest__=np.array('{"format": "ember-npz-1", "root": '
                                                 '{"tensor": "zz", "requires_grad": false}}'))
    with pytest.raises(CheckpointError, match="malformed"):
        ember.load(bad)


# ------------------------------------------------------------------ ember -> PyTorch

def _all_dtypes_state():
    g = ember.Generator().manual_seed(0)
    sd = collections.OrderedDict()
    for d in (ember.float16, ember.float32, ember.float64, ember.int8, ember.int16, ember.int32,
              ember.int64, ember.uint8, ember.bool, ember.complex64, ember.complex128):
        sd[str(d)] = (ember.randn(2, 3, generator=g) * 10).to(d)
    return sd


def test_torch_reads_what_ember_saves(torch):
    sd = _all_dtypes_state()
    base = ember.arange(20.0).reshape(4, 5)
    param = ember.nn.Parameter(ember.randn(3))
    frozen = ember.nn.Parameter(ember.ones(2), requires_grad=False)
    obj = {"sd": sd, "base": base, "view": base[1:, 2:4], "t": base.t(), "row": base[2],
           "expanded": ember.ones(3).expand(2, 3), "param": param, "frozen": frozen,
           "leaf": ember.ones(2, requires_grad=True), "scalar": ember.tensor(2.5),
           "empty": ember.zeros(0, 4), "size": ember.Size([1, 2]), "dtype": ember.float64,
           "device": ember.device("cpu"), "misc": [1, 2.5, "s", None, (True, b"x"), {3}]}
    out = torch.load(io.BytesIO(_saved(obj)), weights_only=True)
    for key, t in sd.items():
        assert str(out["sd"][key].dtype) == key
        np.testing.assert_array_equal(out["sd"][key].numpy(), t.numpy())
    for key in ("base", "view", "t", "row", "expanded", "scalar", "empty"):
        assert tuple(out[key].shape) == tuple(obj[key].shape)
        assert out[key].stride() == obj[key].stride(), key
        assert out[key].storage_offset() == obj[key].storage_offset(), key
        np.testing.assert_array_equal(out[key].numpy(), obj[key].numpy())
    ptr = out["base"].untyped_storage().data_ptr()
    for key in ("view", "t", "row"):
        assert out[key].untyped_storage().data_ptr() == ptr  # saved once, shared
    assert type(out["param"]) is torch.nn.Parameter and out["param"].requires_grad
    assert type(out["frozen"]) is torch.nn.Parameter and not out["frozen"].requires_grad
    assert out["leaf"].requires_grad and not out["base"].requires_grad
    assert out["size"] == torch.Size([1, 2]) and out["dtype"] is torch.float64
    assert out["device"] == torch.device("cpu")
    assert out["misc"] == [1, 2.5, "s", None, (True, b"x"), {3}]


def test_ember_state_dicts_load_into_torch_modules(torch):
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4),
                                ember.nn.Linear(4, 2))
    opt = ember.optim.Adam(model.parameters(), lr=0.01)
    model(ember.randn(6, 3)).sum().backward()
    opt.step()
    ck = torch.load(io.BytesIO(_saved({"model": model.state_dict(),
                                       "opt": opt.state_dict()})), weights_only=True)
    assert type(ck["model"]) is collections.OrderedDict
    assert ck["model"]._metadata == model.state_dict()._metadata
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                              torch.nn.Linear(4, 2))
    net.load_state_dict(ck["model"])
    topt = torch.optim.Adam(net.parameters(), lr=0.01)
    topt.load_state_dict(ck["opt"])
    assert topt.state_dict()["state"][0]["step"].item() == 1
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    model.eval()
    net.eval()
    np.testing.assert_allclose(net(torch.tensor(x)).detach().numpy(),
                               model(ember.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_archive_layout_matches_torch(torch, tmp_path):
    obj = {"w": ember.ones(2, 3), "b": ember.zeros(3)}
    ember.save(obj, tmp_path / "e.model.pt")
    torch.save({"w": torch.ones(2, 3), "b": torch.zeros(3)}, tmp_path / "t.model.pt")
    with zipfile.ZipFile(tmp_path / "e.model.pt") as ez, \
            zipfile.ZipFile(tmp_path / "t.model.pt") as tz:
        names = [n.split("/", 1)[1] for n in ez.namelist()]
        assert names == [n.split("/", 1)[1] for n in tz.namelist()]
        assert {n.split("/", 1)[0] for n in ez.namelist()} == {"e.model"}
        for name in ("version", "byteorder", ".format_version", ".storage_alignment"):
            assert ez.read(f"e.model/{name}") == tz.read(f"t.model/{name}")
        assert ez.read("e.model/data.pkl") == tz.read("t.model/data.pkl")  # the same pickle
        raw = (tmp_path / "e.model.pt").read_bytes()
        for info in ez.infolist():  # every record's data aligned to 64 bytes, as torch's
            n, m = struct.unpack_from("<HH", raw, info.header_offset + 26)
            assert (info.header_offset + 30 + n + m) % 64 == 0


# ------------------------------------------------------------------ PyTorch -> ember

def test_ember_reads_torch_state_and_optimizer(torch):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                              torch.nn.ReLU(), torch.nn.Linear(4, 2))
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    net(torch.randn(5, 3)).sum().backward()
    opt.step()
    x = torch.arange(12.0).reshape(3, 4)
    ck = ember.load(io.BytesIO(_saved({"model": net.state_dict(), "opt": opt.state_dict(),
                                       "x": x, "view": x[1:, ::2], "t": x.t(),
                                       "p": torch.nn.Parameter(torch.ones(2)),
                                       "rg": torch.ones(2, requires_grad=True),
                                       "conj": torch.tensor([1 + 2j]).conj()}, torch)))
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4),
                                ember.nn.ReLU(), ember.nn.Linear(4, 2))
    model.load_state_dict(ck["model"])
    assert ck["model"]._metadata == net.state_dict()._metadata
    for k, v in net.state_dict().items():
        assert str(ck["model"][k].dtype) == str(v.dtype)
        np.testing.assert_array_equal(ck["model"][k].numpy(), v.numpy())
    sgd = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sgd.load_state_dict(ck["opt"])
    buf = ck["opt"]["state"][0]["momentum_buffer"]
    np.testing.assert_array_equal(buf.numpy(), opt.state_dict()["state"][0]["momentum_buffer"])
    for key in ("view", "t"):
        assert ck[key].stride() == (x[1:, ::2] if key == "view" else x.t()).stride()
    assert np.shares_memory(ck["view"].numpy(), ck["x"].numpy())
    assert ck["view"].storage_offset() == 4 and ck["view"].tolist() == [[4.0, 6.0],
                                                                         [8.0, 10.0]]
    assert type(ck["p"]) is ember.nn.Parameter and ck["p"].requires_grad
    assert type(ck["rg"]) is ember.Tensor and ck["rg"].requires_grad
    assert ck["conj"].tolist() == [1 - 2j]


def test_ember_loads_whole_torch_modules(torch):
    torch.manual_seed(1)
    net = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                              torch.nn.Linear(8, 3))
    net.eval()
    data = _saved(net, torch)
    model = ember.load(io.BytesIO(data), weights_only=False)
    assert type(model) is ember.nn.Sequential and type(model[0]) is ember.nn.Conv2d
    x = np.random.default_rng(1).standard_normal((2, 1, 4, 4)).astype(np.float32)
    np.testing.assert_allclose(model(ember.tensor(x)).detach().numpy(),
                               net(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(pickle.UnpicklingError) as want:
        torch.load(io.BytesIO(data))
    with pytest.raises(pickle.UnpicklingError) as got:
        ember.load(io.BytesIO(data))
    assert str(got.value) == str(want.value)


def test_dtypes_ember_lacks_are_named(torch):
    data = _saved({"u": torch.ones(2, dtype=torch.uint16)}, torch)
    with pytest.raises(CheckpointError, match=r"torch\.uint16"):
        ember.load(io.BytesIO(data))
    data = _saved({"b": torch.ones(2, dtype=torch.bfloat16)}, torch)
    if getattr(ember, "bfloat16", None) is None:
        with pytest.raises(CheckpointError, match="bfloat16 needs the optional ml_dtypes"):
            ember.load(io.BytesIO(data))
    else:  # bfloat16 is real (ml_dtypes): both ways
        out = ember.load(io.BytesIO(data))["b"]
        assert out.dtype == ember.bfloat16 and out.to(ember.float32).tolist() == [1.0, 1.0]
        back = torch.load(io.BytesIO(_saved({"b": out, "v": out[1:]})))
        assert back["b"].dtype == torch.bfloat16 and back["v"].tolist() == [1.0]


def test_cuda_locations_need_map_location(torch):
    data = _saved({"w": torch.ones(2)}, torch)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    members["archive/data.pkl"] = members["archive/data.pkl"].replace(
        b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for n, d in members.items():
            zf.writestr(n, d)
    data = buf.getvalue()
    if not torch.cuda.is_available() and not ember.cuda.is_available():
        with pytest.raises(RuntimeError) as want:
            torch.load(io.BytesIO(data))
        with pytest.raises(RuntimeError) as got:
            ember.load(io.BytesIO(data))
        assert str(got.value) == str(want.value)
    for where in ("cpu", {"cuda:0": "cpu"}, lambda s, loc: s):
        assert ember.load(io.BytesIO(data), map_location=where)["w"].tolist() == [1.0, 1.0]


@pytest.mark.slow
def test_load_works_without_torch(torch, tmp_path):
    torch.manual_seed(0)
    lin = torch.nn.Linear(2, 3)
    torch.save({"sd": lin.state_dict(), "v": torch.arange(6.0)[2:5]}, tmp_path / "t.pt")
    script = textwrap.dedent(f"""
        import sys
        sys.modules["torch"] = None  # any import of torch now fails
        import ember
        ck = ember.load({str(tmp_path / "t.pt")!r})
        print(ck["sd"]["weight"].tolist(), ck["sd"]["bias"].tolist(), ck["v"].tolist())
        assert "torch" not in sys.modules or sys.modules["torch"] is None
    """)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ember.__file__)))
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    want = f"{lin.weight.tolist()} {lin.bias.tolist()} [2.0, 3.0, 4.0]"
    assert res.stdout.strip() == want


# ------------------------------------------------------------------ weights_only refusals

def _refusals(torch, tmp_path):
    """Files torch.load(weights_only=True) refuses, each with why."""
    os_payload = type("P", (), {"__reduce__": lambda self: (os.system,
                                                            (f"touch {tmp_path}/pwned",))})
    files = {
        "user class": {"h": Holder(1)},
        "code (os.system)": {"w": torch.ones(2), "evil": os_payload()},
        "code (a function of this module)": {"w": torch.ones(2), "evil": _Payload()},
        "numpy scalar": {"s": np.float64(1.0)},
    }
    out = {k: _saved(v, torch) for k, v in files.items()}
    out["protocol 4 opcodes"] = _torch_format(pickle.dumps({"a": 1}, protocol=4))
    out["bare pickle"] = pickle.dumps(_Payload())
    return out


def _torch_format(pickled):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", pickled)
        zf.writestr("archive/version", "3\n")
    return buf.getvalue()


@pytest.mark.filterwarnings("ignore:Detected pickle protocol 4")
def test_weights_only_refusals_match_torch_and_run_nothing(torch, tmp_path):
    EXECUTED.clear()
    pickle.loads(pickle.dumps(_Payload()))  # sanity: the payload does run when unpickled
    assert EXECUTED == ["pwned"]
    EXECUTED.clear()
    for label, data in _refusals(torch, tmp_path).items():
        with pytest.raises(Exception) as want:
            torch.load(io.BytesIO(data), weights_only=True)
        with pytest.raises(Exception) as got, warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ember.load(io.BytesIO(data))
        if label == "protocol 4 opcodes":  # PyTorch warns first, and so does ember
            assert "Detected pickle protocol 4 in the checkpoint" in str(caught[0].message)
        if label == "bare pickle":  # not a zip: torch tries its legacy format
            assert type(got.value) is CheckpointError
        else:
            assert type(got.value) is type(want.value) is pickle.UnpicklingError, label
            assert str(got.value) == str(want.value), label
        assert EXECUTED == [] and not (tmp_path / "pwned").exists(), label


def test_safe_globals_admit_user_classes(torch):
    data = _saved({"h": Holder([1, 2]), "w": torch.ones(1)}, torch)
    with torch.serialization.safe_globals([Holder]):
        want = torch.load(io.BytesIO(data))
    assert ember.serialization.get_safe_globals() == []
    with ember.serialization.safe_globals([Holder]):
        assert ember.serialization.get_safe_globals() == [Holder]
        got = ember.load(io.BytesIO(data))
    assert ember.serialization.get_safe_globals() == []
    assert type(got["h"]) is Holder and got["h"].value == want["h"].value == [1, 2]
    with pytest.raises(pickle.UnpicklingError):
        ember.load(io.BytesIO(data))
    ember.serialization.add_safe_globals([(Holder, f"{__name__}.Holder")])
    try:
        assert ember.load(io.BytesIO(data))["h"].value == [1, 2]
    finally:
        ember.serialization.clear_safe_globals()


def test_safe_globals_name_ember_classes_for_torch_files(torch):
    torch.manual_seed(0)
    data = _saved(torch.nn.Linear(2, 3), torch)
    with ember.serialization.safe_globals([ember.nn.Linear]):
        lin = ember.load(io.BytesIO(data))
    assert type(lin) is ember.nn.Linear and lin.weight.shape == (3, 2)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL torch.nn.modules.linear.Linear"):
        ember.load(io.BytesIO(data))


def test_pickle_module_and_weights_only_arguments(torch):
    data = _saved({"w": ember.ones(1)})
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="Can not safely load weights when explicit "
                                               "pickle_module is specified"):
            lib.load(io.BytesIO(data), pickle_module=pickle, weights_only=True)
    assert ember.load(io.BytesIO(data), pickle_module=pickle)["w"].tolist() == [1.0]
    for lib in (torch, ember):
        with pytest.raises(ValueError, match="f must be a file path in order to use the mmap"):
            lib.load(io.BytesIO(data), mmap=True)


@pytest.mark.parametrize("env, kwargs", [
    ({"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}, {}),
    ({"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "yes"}, {"weights_only": True}),
    ({"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "true"}, {"weights_only": False}),
    ({"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "1", "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}, {}),
])
def test_weights_only_environment_variables_as_pytorch(torch, tmp_path, monkeypatch, env,
                                                      kwargs):
    """PyTorch's overrides of the default: a NumPy array (refused by the weights-only
    unpickler) loads, or not, with the same warning or error."""
    outcome = {}
    for lib in (ember, torch):
        path = tmp_path / f"{lib.__name__}.pt"
        lib.save({"a": np.arange(3)}, path)
        with monkeypatch.context() as m:
            for key, value in env.items():
                m.setenv(key, value)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    got = repr(lib.load(path, **kwargs)["a"])
                except Exception as e:  # noqa: BLE001 - the same type and start is the point
                    got = (type(e).__name__, str(e)[:60])
        outcome[lib.__name__] = got, [str(w.message) for w in caught]
    assert outcome["ember"] == outcome["torch"]
