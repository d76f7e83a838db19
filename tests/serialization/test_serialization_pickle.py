"""ember.load on hostile PyTorch-format files: the pickle layer (opcodes, globals, nesting,
memo tricks), the storages (declared sizes, offsets, strides) and the archive around them.
Each file is built by hand: a pickle assembled from opcodes, zipped as torch.save lays it out.
Refusals of what weights_only forbids are compared with real torch.load's, word for word."""
import functools
import io
import pickle
import struct
import time
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ember
from ember.serialization import CheckpointError

from .hostile_files import MiB, load_bytes, peak_allocation, refused

# ------------------------------------------------------------------ building files

def _str(s):
    data = s.encode()
    return b"X" + struct.pack("<I", len(data)) + data


def _int(n):
    if -2**31 <= n < 2**31:
        return b"J" + struct.pack("<i", n)
    data = pickle.encode_long(n)
    return b"\x8a" + bytes([len(data)]) + data  # LONG1


def _tuple(*items):
    return b"(" + b"".join(items) + b"t"


def _global(module, name):
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


_EMPTY_ODICT = _global("collections", "OrderedDict") + b")R"


def _storage(key="0", kind="FloatStorage", numel=6, location="cpu"):
    return _tuple(_str("storage"), _global("torch", kind), _str(key), _str(location),
                  _int(numel)) + b"Q"


def _tensor(storage=None, offset=0, size=(2, 3), stride=(3, 1), requires_grad=False,
            hooks=_EMPTY_ODICT, extra=b""):
    storage = _storage() if storage is None else storage
    return (_global("torch._utils", "_rebuild_tensor_v2")
            + _tuple(storage, _int(offset), _tuple(*map(_int, size)),
                     _tuple(*map(_int, stride)), b"\x88" if requires_grad else b"\x89",
                     hooks, extra) + b"R")


def _pickle(body):
    return b"\x80\x02" + body + b"."


def _file(pkl, storages=None, compression=zipfile.ZIP_STORED, prefix="archive"):
    """A PyTorch-format archive: ``pkl`` (pickle bytes) and ``storages`` (key -> bytes)."""
    storages = {"0": np.arange(6, dtype=np.float32).tobytes()} if storages is None else storages
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        zf.writestr(f"{prefix}/data.pkl", pkl)
        zf.writestr(f"{prefix}/byteorder", "little")
        for key, data in storages.items():
            zf.writestr(f"{prefix}/data/{key}", data)
        zf.writestr(f"{prefix}/version", "3\n")
    return buf.getvalue()


def test_the_hand_built_file_is_what_torch_reads(torch):
    data = _file(_pickle(_tensor()))
    want = torch.load(io.BytesIO(data))
    got = load_bytes(data)
    assert got.tolist() == want.tolist() == [[0, 1, 2], [3, 4, 5]]


# ------------------------------------------------------------------ what weights_only refuses

@pytest.mark.parametrize("body", [
    b"0",  # POP
    b"2",  # DUP
    b"I1\n",  # INT (text)
    b"B\x01\x00\x00\x00x",  # BINBYTES
    b"\x8c\x01a",  # SHORT_BINUNICODE
    b"\x94",  # MEMOIZE
    b"\x95" + bytes(8),  # FRAME
    _str("os") + _str("system") + b"\x93",  # STACK_GLOBAL
    b"(" + _str("os") + b"isystem\n",  # INST
    _global("posix", "system") + _tuple(_str("echo pwned")) + b"R",
    _global("builtins", "eval") + _tuple(_str("1")) + b"R",
    _global("builtins", "getattr"),
    _global("torch", "load"),
    _global("collections", "defaultdict"),
    _global("numpy.core.multiarray", "_reconstruct"),
    _str("x") + _tuple() + b"R",  # REDUCE on a string
    b"}" + _int(1) + b"a",  # APPEND to a dict
    b"}(" + _int(1) + b"e",  # APPENDS to a dict
    b"]" + _int(1) + _int(2) + b"s",  # SETITEM on a list
    b"]}b",  # BUILD on a list
    _str("not a tuple") + b"Q",  # persistent id of the wrong type
    _tuple(_str("module"), _int(1)) + b"Q",  # persistent id that is not a storage
    _str("x") + _tuple() + b"\x81",  # NEWOBJ of a string
], ids=lambda b: repr(b[:24]))
def test_refusals_are_torchs_word_for_word(torch, body):
    data = _file(_pickle(body))
    with pytest.raises(pickle.UnpicklingError) as want:
        torch.load(io.BytesIO(data))
    with pytest.raises(pickle.UnpicklingError) as got:
        load_bytes(data)
    assert type(got.value) is pickle.UnpicklingError
    assert str(got.value) == str(want.value)
    assert str(got.value).startswith("Weights only load failed.")


def test_weights_only_false_is_a_full_unpickler(torch):
    data = _file(_pickle(_global("collections", "defaultdict") + _tuple() + b"R"))
    assert type(load_bytes(data, weights_only=False)).__name__ == "defaultdict"


# ------------------------------------------------------------------ malformed pickles

@pytest.mark.parametrize("body,match", [
    (b"", "not a valid pickle"),  # STOP on an empty stack
    (b"t", "not a valid pickle"),  # TUPLE without MARK
    (b"s", "not a valid pickle"),
    (b"\x86", "not a valid pickle"),  # TUPLE2 on an empty stack
    (b"h\x07", "memo entry 7, which it never stored"),
    (b"j\xff\xff\xff\x7f", "memo entry 2147483647"),
    (b"X\xff\xff\xff\x7fabc", "truncated"),
    (b"c" + b"torch" * 100, "truncated"),
    (_global("builtins", "set") + _tuple(_int(5)) + b"R", r"set\(5,\)"),
    (_global("builtins", "set") + _tuple(b"]" + b"(]e") + b"R", "not a valid pickle"),
    (_global("builtins", "bytearray") + _tuple(_int(10**9)) + b"R", "only \\(str, 'latin1'\\)"),
    (_global("_codecs", "encode") + _tuple(_str("x"), _str("zlib")) + b"R", "latin1"),
    (_global("builtins", "complex") + _tuple(_str("1e99999999")) + b"R", "complex"),
    (_global("torch", "Size") + _tuple(_tuple(_str("a"))) + b"R", "torch.Size"),
    (_global("torch", "device") + _tuple(_str("tpu")) + b"R", "torch.device"),
    (_global("torch.serialization", "_get_layout") + _tuple(_str("torch.sparse_coo")) + b"R",
     "only torch.strided"),
    (_global("torch._utils", "_rebuild_qtensor"), r"quantized tensor \(torch._utils"),
    (_global("torch._utils", "_rebuild_sparse_tensor"), "sparse tensor"),
    (_global("torch", "uint16"), r"a dtype \(torch.uint16\), which ember does not have"),
    (_global("torch", "per_tensor_affine"), "quantization scheme"),
    (_global("collections", "OrderedDict") + b")R" + _str("x") + b"b", "state 'x' is not a dict"),
    (_global("torch", "Tensor") + b")R", "legacy format"),
])
def test_malformed_pickles(body, match):
    refused(_file(_pickle(body)), match)


def test_pickle_without_stop():
    refused(_file(b"\x80\x02" + _int(1)), "data.pkl is truncated")


def test_data_after_stop_is_ignored_as_by_torch(torch):
    data = _file(_pickle(_int(5)) + b"garbage")
    assert load_bytes(data) == torch.load(io.BytesIO(data)) == 5


# ------------------------------------------------------------------ nesting and memo tricks

def test_deeply_nested_tuples_are_refused_as_they_are_built():
    start = time.perf_counter()
    refused(_file(_pickle(b")" + b"\x85" * 100_000)), "tuples nest more than 512")
    assert time.perf_counter() - start < 2.0
    ok = load_bytes(_file(_pickle(b")" + b"\x85" * 511)))
    for _ in range(511):
        (ok,) = ok
    assert ok == ()


@pytest.mark.slow
@pytest.mark.parametrize("opener,closer", [(b"]", b"a"), (b"}" + _str("k"), b"s")])
def test_deeply_nested_containers_are_refused(opener, closer):
    deep = _file(_pickle(opener * 100_000 + _int(0) + closer * 100_000))
    refused(deep, "nests more than 512 levels")
    at_limit = _file(_pickle(opener * 511 + _int(0) + closer * 511))
    assert load_bytes(at_limit) is not None


def _chain_of_lists(n):
    """n empty lists, each stored in the memo and appended to an outer list, and only then
    linked (list i appended into list i-1) through the memo: a nesting n deep that no check
    made when each list was built could see."""
    body = b"]" + b"".join(b"]" + _memo_put(i) + b"a" for i in range(1, n + 1))
    links = b"".join(_memo_get(i) + _memo_get(i + 1) + b"a" for i in range(1, n))
    return _pickle(body + b"(" + links + b"e")  # APPENDS moves the link targets to the outer


def test_lists_nested_through_the_memo_after_they_were_built_are_measured():
    refused(_file(_chain_of_lists(600)), "nests more than 512 levels")
    out = load_bytes(_file(_chain_of_lists(400)))
    assert out[0] is out[400] and len(out) == 800 - 1


def _memo_put(i):
    return b"q" + bytes([i]) if i < 256 else b"r" + struct.pack("<I", i)


def _memo_get(i):
    return b"h" + bytes([i]) if i < 256 else b"j" + struct.pack("<I", i)


def test_billion_laughs_through_the_memo_stay_small_and_fast():
    body = b"]" + _memo_put(0)
    for level in range(1, 40):  # each level: a list holding the previous one 10 times
        body += b"](" + _memo_get(level - 1) * 10 + b"e" + _memo_put(level)
    start = time.perf_counter()
    out, peak = peak_allocation(lambda: load_bytes(_file(_pickle(body))))
    assert time.perf_counter() - start < 1.0 and peak < 4 * MiB
    assert out[0] is out[9]  # 10**39 paths, 40 objects


def test_a_huge_list_costs_a_bounded_multiple_of_the_pickle():
    pkl = _pickle(b"]" + _memo_put(0) + b"(" + _memo_get(0) * (MiB // 16) + b"e")
    out, peak = peak_allocation(lambda: load_bytes(_file(pkl)))
    assert len(out) == MiB // 16 and out[0] is out
    assert peak < 12 * len(pkl)  # pointers to one object: about 4 bytes of list per byte


# ------------------------------------------------------------------ storages and views

def test_declared_storage_sizes_are_checked_before_allocating():
    pkl = _pickle(_tensor(_storage(numel=10**12), size=(10**12,), stride=(1,)))
    err, peak = peak_allocation(lambda: load_bytes(_file(pkl), max_bytes=1 << 50))
    assert isinstance(err, CheckpointError), err
    assert "storage '0' should hold 4000000000000 bytes but its zip entry declares 24" \
        in str(err)
    assert peak < 2 * MiB
    refused(_file(_pickle(_tensor(_storage(numel=5)))), "should hold 20 bytes .* declares 24")
    refused(_file(_pickle(_tensor(_storage(numel=-1)))), "malformed storage id")


@pytest.mark.parametrize("kw,match", [
    (dict(offset=1), "needs 7 elements, out of bounds for its storage of 6"),
    (dict(stride=(10**15, 1)), "out of bounds"),
    (dict(offset=2**62), "out of bounds"),
    (dict(size=(2**40, 2**40), stride=(0, 0), offset=6), "needs 7 elements"),
    (dict(size=(3, 3)), "needs 9 elements"),
    (dict(stride=(-3, 1)), "each must be an int >= 0"),
    (dict(size=(-2, 3)), "each must be an int >= 0"),
    (dict(offset=-1), "each must be an int >= 0"),
    (dict(size=(2,), stride=(3, 1)), "1 sizes and 2 strides"),
    (dict(size=(1,) * 65, stride=(1,) * 65), "65 sizes"),
    (dict(size=(0, 3), offset=7), "needs 7 elements"),
])
def test_views_outside_their_storage_are_refused(kw, match):
    refused(_file(_pickle(_tensor(**kw))), match)


def test_views_inside_their_storage_load(torch):
    for kw in (dict(size=(2, 2), stride=(1, 3), offset=1), dict(size=(4, 3), stride=(0, 1)),
               dict(size=(0, 3), offset=6), dict(size=(), stride=(), offset=5)):
        data = _file(_pickle(_tensor(**kw)))
        assert load_bytes(data).tolist() == torch.load(io.BytesIO(data)).tolist()


@pytest.mark.parametrize("kw,match", [
    (dict(requires_grad=True, storage=_storage(kind="LongStorage", numel=3), size=(3,),
          stride=(1,)), "dtype torch.int64 requires grad"),
    (dict(hooks=b"}" + _str("h") + _int(1) + b"s"), "backward hooks"),
    (dict(extra=b"}" + _str("qscheme") + b"\x88s"), "metadata .* is not supported"),
    (dict(storage=_storage(kind="QInt8Storage")), "quantized storage"),
    (dict(storage=_storage(key="9")), "storage '9', which the file does not hold"),
    (dict(storage=_storage(location="tpu:0")), "saved on 'tpu:0', where ember cannot place"),
])
def test_bad_tensor_rebuilds(kw, match):
    with pytest.raises(RuntimeError, match=match):
        load_bytes(_file(_pickle(_tensor(**kw))))


def test_materialised_conj_views_count_against_max_bytes():
    conj = b"}" + _str("conj") + b"\x88s"
    huge = _tensor(_storage(kind="ComplexFloatStorage", numel=1), size=(2**20, 2**20),
                   stride=(0, 0), extra=conj)
    data = _file(_pickle(huge), {"0": bytes(8)})
    err, peak = peak_allocation(lambda: load_bytes(data))
    assert isinstance(err, CheckpointError) and "conj / neg views" in str(err)
    assert peak < 2 * MiB
    many = _tuple(*[_tensor(_storage(kind="ComplexFloatStorage", numel=2**17),
                            size=(2**17,), stride=(1,), extra=conj)] * 200)
    data = _file(_pickle(many), {"0": bytes(2**20)})  # 1 MiB, 200 conjugated copies of it
    refused(data, "conj / neg views", max_bytes=100 * MiB)
    assert len(load_bytes(data, max_bytes=256 * MiB)) == 200


def test_storages_saved_on_other_devices_load_with_map_location():
    data = _file(_pickle(_tensor(_storage(location="mps"))))
    refused(data, "saved on 'mps', where ember cannot place it; pass map_location")
    assert load_bytes(data, map_location="cpu").shape == (2, 3)
    assert load_bytes(data, map_location={"mps": "cpu"}).shape == (2, 3)
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        load_bytes(data, map_location="mps")  # the caller's own word: ember's device error


def test_one_storage_declared_two_ways():
    two = _tuple(_tensor(), _tensor(_storage(kind="IntStorage")))
    refused(_file(_pickle(b"(" + two[1:])), "declared as 6 elements of torch.float32 and as "
                                             "6 of torch.int32")


def test_bare_storages_are_refused(torch):
    buf = io.BytesIO()
    torch.save({"s": torch.ones(2).untyped_storage()}, buf)
    refused(buf.getvalue(), "bare storage")


# ------------------------------------------------------------------ the archive

def test_zip_bomb_in_torch_format_is_refused_before_allocating():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("archive/data.pkl", _pickle(_tensor(_storage(numel=24 * MiB),
                                                        size=(24 * MiB,), stride=(1,))))
        with zf.open("archive/data/0", "w", force_zip64=True) as fh:
            for _ in range(96):
                fh.write(bytes(MiB))
    data = buf.getvalue()
    assert len(data) < 200_000
    err, peak = peak_allocation(lambda: load_bytes(data))
    assert isinstance(err, CheckpointError) and "over the limit" in str(err)
    assert peak < 4 * MiB
    out = load_bytes(data, max_bytes=100 * MiB)
    assert out.shape == (24 * MiB,) and not out.numpy().any()


@pytest.mark.parametrize("names,match", [
    (["archive/data.pkl", "other/data/0"], "unexpected member 'other/data/0'"),
    (["archive/data.pkl", "archive/../x"], "unexpected member"),
    (["archive/data.pkl", "archive/data/0/x"], "unexpected member"),
    (["archive/data.pkl", "archive/constants.pkl", "archive/code/x.py"], "TorchScript"),
    (["data.pkl"], "not a checkpoint"),
    (["a/b/data.pkl"], "not a checkpoint"),
])
def test_member_names(names, match):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name in names:
            zf.writestr(name, _pickle(_int(1)) if name.endswith("data.pkl") else b"")
    refused(buf.getvalue(), match)


@pytest.mark.parametrize("record,value,match", [
    ("byteorder", b"middle", "unknown endianness type"),
    ("version", b"99\n", "unknown format version"),
    ("version", b"x" * 100, "record is 100 bytes long"),
])
def test_bad_records(record, value, match):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", _pickle(_int(1)))
        zf.writestr(f"archive/{record}", value)
    refused(buf.getvalue(), match)


def test_big_endian_files_are_swapped(torch):
    data = np.arange(6, dtype=">f4").tobytes()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", _pickle(_tensor()))
        zf.writestr("archive/byteorder", "big")
        zf.writestr("archive/data/0", data)
        zf.writestr("archive/version", "3\n")
    assert load_bytes(buf.getvalue()).tolist() == torch.load(io.BytesIO(buf.getvalue())).tolist()


# ------------------------------------------------------------------ PyTorch's legacy format

@functools.lru_cache(maxsize=1)
def _legacy_base():
    torch = pytest.importorskip("torch")
    return _legacy(torch, {"w": torch.arange(6.0).reshape(2, 3), "v": [1, "x", (2.5,)],
                           "p": torch.nn.Parameter(torch.ones(2))})


def _legacy(torch, obj):
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=False)
    return buf.getvalue()


def test_legacy_torch_files_load(torch):
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 2)
    x = torch.arange(10.0)
    data = _legacy(torch, {"sd": net.state_dict(), "v": x[2:5], "x": x, "n": 3,
                           "p": torch.nn.Parameter(torch.ones(2)),
                           "h": torch.ones(2, dtype=torch.float16)})
    out = load_bytes(data)
    assert out["sd"]["weight"].tolist() == net.weight.tolist() and out["n"] == 3
    assert out["v"].tolist() == [2.0, 3.0, 4.0] and out["v"].storage_offset() == 2
    assert np.shares_memory(out["v"].numpy(), out["x"].numpy())
    assert type(out["p"]) is ember.nn.Parameter and out["h"].dtype == ember.float16
    module = _legacy(torch, net)
    assert type(load_bytes(module, weights_only=False)) is ember.nn.Linear
    with pytest.raises(pickle.UnpicklingError) as want:
        torch.load(io.BytesIO(module))
    with pytest.raises(pickle.UnpicklingError) as got:
        load_bytes(module)
    assert str(got.value) == str(want.value)


def test_legacy_torch_files_hostile(torch):
    data = _legacy(torch, {"w": torch.arange(6.0)})
    tail = data.rindex(struct.pack("<q", 6))  # the storage's element count, then its data
    for cut in (5, 30, len(data) // 2, tail + 4, len(data) - 1):
        refused(data[:cut], "ember.load: ")
    refused(data[:tail] + struct.pack("<q", 7) + data[tail + 8:] + bytes(4),
             "holds 7 elements, but the pickle declares 6")
    huge = data.replace(b"K\x06Nt", b"J" + struct.pack("<i", 2**30) + b"Nt", 1)
    err, peak = peak_allocation(lambda: load_bytes(huge))
    assert isinstance(err, CheckpointError) and "more than the file's" in str(err)
    assert peak < 2 * MiB
    refused(data, "pickles take more than the limit of 100 bytes", max_bytes=100)
    refused(data, "over what the limit leaves", max_bytes=len(data) - 30)
    assert load_bytes(data, max_bytes=len(data))["w"].tolist() == list(range(6))
    at = data.rindex(b"]q\x00X")  # the list of storage keys: name one the pickle does not
    refused(data[:at + 9] + b"7" + data[at + 10:], "storage keys .* are not those")
    assert load_bytes(data)["w"].tolist() == list(range(6))


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), max_size=3),
       cut=st.none() | st.integers(0, 10**6))
def test_fuzzed_legacy_torch_files_load_or_raise_a_clean_error(flips, cut):
    data = bytearray(_legacy_base())
    for pos, xor in flips:  # past the magic number, which tells the format
        data[18 + pos % (len(data) - 18)] ^= xor
    if cut is not None:
        data = data[:cut % (len(data) + 1)]
    _ok_or_clean_error(bytes(data))


# ------------------------------------------------------------------ fuzzing

def _bases():
    sd = {"w": ember.arange(12.0).reshape(3, 4), "v": None, "n": [1, 2.5, "x", (3,)],
          "p": ember.nn.Parameter(ember.ones(2))}
    sd["v"] = sd["w"][1:, ::2]
    buf = io.BytesIO()
    ember.save(sd, buf)
    with zipfile.ZipFile(buf) as zf:
        return buf.getvalue(), zf.read("archive/data.pkl")


_FILE, _PKL = _bases()


def _ok_or_clean_error(data):
    try:
        load_bytes(data)
    except CheckpointError as exc:
        assert str(exc).startswith("ember.load: ")
    except pickle.UnpicklingError as exc:
        assert str(exc).startswith("Weights only load failed.")


@settings(max_examples=250, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), max_size=4),
       cut=st.none() | st.integers(0, 10**6))
def test_fuzzed_files_load_or_raise_a_clean_error(flips, cut):
    data = bytearray(_FILE)
    for pos, xor in flips:
        data[pos % len(data)] ^= xor
    if cut is not None:
        data = data[:cut % (len(data) + 1)]
    _ok_or_clean_error(bytes(data))


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), max_size=3),
       cut=st.none() | st.integers(0, 10**6))
def test_fuzzed_pickles_load_or_raise_a_clean_error(flips, cut):
    """Mutations inside data.pkl, zipped anew so that the CRC does not catch them first."""
    pkl = bytearray(_PKL)
    for pos, xor in flips:
        pkl[pos % len(pkl)] ^= xor
    if cut is not None:
        pkl = pkl[:cut % (len(pkl) + 1)]
    with zipfile.ZipFile(io.BytesIO(_FILE)) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    members["archive/data.pkl"] = bytes(pkl)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, value in members.items():
            zf.writestr(name, value)
    _ok_or_clean_error(buf.getvalue())
