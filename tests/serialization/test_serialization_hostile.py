"""ember.load on hostile or broken files: one exception type, a message naming the problem,
and no allocation beyond the limit. Most files here are in ember's older zip-of-.npy format
(still read), built by hand (zipfile / numpy / json); the zip-level checks they exercise are
shared with PyTorch's format, whose pickle layer has its own hostile tests
(test_serialization_pickle.py)."""
import collections
import io
import json
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

# ------------------------------------------------------------------ building archives

def _npy(array):
    """A .npy member as numpy writes it."""
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return buf.getvalue()


def _raw_npy(header, data=b"", version=(1, 0)):
    """A .npy member with ``header`` (the dict literal text) written as given."""
    text = header.encode("latin1")
    length = struct.pack("<H" if version == (1, 0) else "<I", len(text))
    return b"\x93NUMPY" + bytes(version) + length + text + data


def _manifest_text(root):
    return json.dumps({"format": "ember-npz-1", "root": root})


def _archive(members, compression=zipfile.ZIP_STORED):
    """Zip bytes holding ``members`` (name -> bytes), in order."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _checkpoint(root, arrays=None, manifest=None, compression=zipfile.ZIP_STORED):
    """An ember checkpoint: ``arrays`` (key -> ndarray or raw .npy bytes) and a manifest
    (``root`` wrapped in the format record, or ``manifest`` text as given)."""
    members = {}
    for key, value in (arrays or {}).items():
        members[f"{key}.npy"] = value if isinstance(value, bytes) else _npy(value)
    text = _manifest_text(root) if manifest is None else manifest
    members["__ember_manifest__.npy"] = _npy(np.array(text))
    return _archive(members, compression)


_TENSOR_A0 = {"tensor": "a0", "requires_grad": False}


def _dict_node(**items):
    return {"dict": [[k, v] for k, v in items.items()]}


def _patch_entry(data, name, **fields):
    """Overwrite 16/32-bit fields of entry ``name`` in the central directory and its local
    header: what a crafted file can claim about sizes, flags and compression."""
    layout = {"flag_bits": (8, 6, "<H"), "compress_type": (10, 8, "<H"),
              "compress_size": (20, 18, "<I"), "file_size": (24, 22, "<I")}
    buf = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        local, pos = zf.getinfo(name).header_offset, zf.start_dir
    while True:
        assert buf[pos:pos + 4] == b"PK\x01\x02"
        n, m, k = struct.unpack_from("<HHH", buf, pos + 28)
        if buf[pos + 46:pos + 46 + n] == name.encode():
            break
        pos += 46 + n + m + k
    for field, value in fields.items():
        central, local_offset, fmt = layout[field]
        struct.pack_into(fmt, buf, pos + central, value)
        struct.pack_into(fmt, buf, local + local_offset, value)
    return bytes(buf)


def _member_span(data, name):
    """(start, end) of member ``name``'s stored bytes in archive ``data``."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        info = zf.getinfo(name)
    n, m = struct.unpack_from("<HH", data, info.header_offset + 26)
    start = info.header_offset + 30 + n + m
    return start, start + info.compress_size


def _zeros_bomb(nbytes):
    """A checkpoint whose one float32 tensor is ``nbytes`` of zeros, deflated (~1000x)."""
    header = _raw_npy(f"{{'descr': '<f4', 'fortran_order': False, 'shape': ({nbytes // 4},)}}")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("a0.npy", "w", force_zip64=True) as fh:
            fh.write(header)
            chunk = bytes(MiB)
            for _ in range(nbytes // MiB):
                fh.write(chunk)
        manifest = _manifest_text(_dict_node(w=_TENSOR_A0))
        zf.writestr("__ember_manifest__.npy", _npy(np.array(manifest)))
    return buf.getvalue()


@pytest.fixture(scope="module")
def bomb():
    """96 MiB of zeros in a file of about 100 KB."""
    return _zeros_bomb(96 * MiB)


# ------------------------------------------------------------------ legitimate files

def _state():
    g = ember.Generator().manual_seed(1)
    return collections.OrderedDict([
        ("w", ember.randn(5, 3, generator=g, requires_grad=True)),
        ("b", ember.zeros(5, dtype=ember.float64)),
        ("i", ember.arange(4, dtype=ember.int16)),
        ("m", ember.tensor([True, False])),
        ("c", ember.tensor([1 + 2j], dtype=ember.complex64)),
        ("h", ember.ones(2, 2, dtype=ember.float16)),
        ("u", ember.arange(3, dtype=ember.uint8)),
        ("nd", np.arange(6, dtype=np.uint32).reshape(2, 3)),
        ("meta", {"step": 3, "lr": 1e-3, "betas": (0.9, 0.999), "s": np.int64(7), "n": None}),
    ])


def test_valid_file_round_trips_unchanged():
    sd = _state()
    buf = io.BytesIO()
    ember.save(sd, buf)
    out = ember.load(io.BytesIO(buf.getvalue()), weights_only=False)  # NumPy objects in it
    assert list(out) == list(sd) and isinstance(out, collections.OrderedDict)
    arrays = []
    for key in ("w", "b", "i", "m", "c", "h", "u"):
        assert out[key].dtype == sd[key].dtype and out[key].shape == sd[key].shape
        assert out[key].requires_grad == sd[key].requires_grad
        np.testing.assert_array_equal(out[key].detach().numpy(), sd[key].detach().numpy())
        data = out[key]._data
        assert data.flags.writeable and data.flags.c_contiguous
        assert data.base.nbytes == data.nbytes  # its storage holds exactly its data
        assert not any(np.shares_memory(data, a) for a in arrays + [sd[key]._data])
        arrays.append(data)
    assert out["nd"].dtype == np.uint32 and out["nd"].tolist() == sd["nd"].tolist()
    assert out["meta"] == sd["meta"] and type(out["meta"]["s"]) is np.int64
    again = io.BytesIO()
    ember.save(out, again)
    assert ember.load(io.BytesIO(again.getvalue()), weights_only=False)["meta"] == sd["meta"]


def test_files_from_save_are_far_below_the_default_limit():
    buf = io.BytesIO()
    ember.save({"zeros": ember.zeros(1000, 1000), "state": _state()}, buf)
    with zipfile.ZipFile(buf) as zf:
        declared = sum(info.file_size for info in zf.infolist())
    assert declared <= len(buf.getvalue())  # stored, so never over 1x the file's size
    out = ember.load(io.BytesIO(buf.getvalue()), weights_only=False)
    assert out["zeros"].sum().item() == 0


def test_load_reads_straight_into_the_final_array():
    t = ember.randn(4 * MiB)  # 16 MiB of float32
    buf = io.BytesIO()
    ember.save({"t": t}, buf)
    stream = io.BytesIO(buf.getvalue())
    out, peak = peak_allocation(lambda: ember.load(stream))
    np.testing.assert_array_equal(out["t"].numpy(), t.numpy())
    assert peak < 16 * MiB * 1.25  # one copy of the data plus small buffers, not two


def test_big_endian_fortran_and_compressed_members_load():
    be = np.arange(6, dtype=">f4").reshape(2, 3)
    fo = np.asfortranarray(np.arange(12, dtype=np.int64).reshape(3, 4))
    data = _checkpoint({"list": [_TENSOR_A0, {"ndarray": "a1"}]}, {"a0": be, "a1": fo},
                       compression=zipfile.ZIP_DEFLATED)
    t, arr = load_bytes(data)
    assert t.dtype == ember.float32 and t.tolist() == be.tolist()
    assert arr.dtype == np.int64 and arr.dtype.isnative and arr.tolist() == fo.tolist()


def test_a_manifest_at_the_depth_limit_loads():
    root = 0
    for _ in range(255):  # 1 + 2 * 255 + ... = 511 JSON levels
        root = {"list": [root]}
    out = load_bytes(_checkpoint(root))
    for _ in range(255):
        (out,) = out
    assert out == 0


def test_brackets_inside_strings_do_not_count_as_nesting():
    text = "[" * 5000 + '"\\"{' + "}" * 3000
    assert load_bytes(_checkpoint({"list": [text, {"dict": [[text, 1]]}]})) == [text, {text: 1}]


# ------------------------------------------------------------------ size limits

def test_zip_bomb_is_refused_fast_without_allocating(bomb):
    assert len(bomb) < 200_000
    start = time.perf_counter()
    err, peak = peak_allocation(lambda: load_bytes(bomb))
    elapsed = time.perf_counter() - start
    assert isinstance(err, CheckpointError), err
    assert "declare" in str(err) and "over the limit" in str(err) and "max_bytes" in str(err)
    assert peak < 4 * MiB and elapsed < 1.0


def test_honest_big_file_loads_within_max_bytes(bomb):
    with zipfile.ZipFile(io.BytesIO(bomb)) as zf:
        total = sum(info.file_size for info in zf.infolist())
    refused(bomb, f"declare {total} bytes in all, over the limit of {total - 1}",
             max_bytes=total - 1)
    out, peak = peak_allocation(lambda: load_bytes(bomb, max_bytes=total))
    assert out["w"].shape == (24 * MiB,) and not out["w"].numpy().any()
    assert 96 * MiB <= peak < 96 * MiB * 1.1


def test_max_bytes_bounds_ordinary_files_both_ways():
    buf = io.BytesIO()
    ember.save({"w": ember.ones(1000)}, buf)
    with zipfile.ZipFile(buf) as zf:
        total = sum(info.file_size for info in zf.infolist())
    assert load_bytes(buf.getvalue(), max_bytes=total)["w"].sum().item() == 1000
    refused(buf.getvalue(), f"over the limit of {total - 1}.*max_bytes={total - 1}",
             max_bytes=total - 1)
    refused(buf.getvalue(), "over the limit of 0", max_bytes=0)
    with pytest.raises(ValueError, match="max_bytes"):
        load_bytes(buf.getvalue(), max_bytes=-1)
    for bad in (1.5e9, "10", True):
        with pytest.raises(TypeError):
            load_bytes(buf.getvalue(), max_bytes=bad)


def test_header_shape_larger_than_the_member_is_refused_before_allocating():
    member = _raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (375000000,), }",
                      bytes(1000))
    data = _checkpoint(_TENSOR_A0, {"a0": member})
    err, peak = peak_allocation(lambda: load_bytes(data, max_bytes=1 << 40))
    assert isinstance(err, CheckpointError)
    assert "member 'a0' declares 1500000000 bytes of data" in str(err)
    assert "holds 1000" in str(err)
    assert peak < 4 * MiB


def test_entries_declaring_impossible_sizes_are_refused():
    good = _checkpoint(_TENSOR_A0, {"a0": np.zeros(1000)}, compression=zipfile.ZIP_DEFLATED)
    with zipfile.ZipFile(io.BytesIO(good)) as zf:
        compressed = zf.getinfo("a0.npy").compress_size
    lying = _patch_entry(good, "a0.npy", file_size=1_500_000_000)
    err, peak = peak_allocation(lambda: load_bytes(lying, max_bytes=1 << 40))
    assert isinstance(err, CheckpointError), err
    assert f"declares 1500000000 bytes, which its {compressed} deflated bytes" in str(err)
    assert peak < 4 * MiB
    stored = _checkpoint(_TENSOR_A0, {"a0": np.zeros(10)})
    refused(_patch_entry(stored, "a0.npy", file_size=10**8), "stored bytes cannot hold",
             max_bytes=1 << 40)
    refused(_patch_entry(stored, "a0.npy", compress_size=4_000_000_000),
             "claims 4000000000 compressed bytes but the file holds only")


# ------------------------------------------------------------------ not a checkpoint at all

@pytest.mark.parametrize("data", [b"", b"not a checkpoint", b"PK\x03\x04" + bytes(50),
                                  _npy(np.ones(3))], ids=["empty", "text", "zip-magic", "npy"])
def test_non_zip_files(data):
    refused(data, "not an ember checkpoint: not a readable zip archive")


def test_truncated_files():
    data = _checkpoint({"list": [_TENSOR_A0, {"ndarray": "a1"}]},
                       {"a0": np.arange(100.0), "a1": np.ones(50)})
    for cut in (len(data) // 4, len(data) // 2, len(data) - 30, len(data) - 1):
        refused(data[:cut], "ember.load: ")


def test_member_truncated_inside_the_archive():
    data = _checkpoint({"list": [_TENSOR_A0, {"ndarray": "a1"}]},
                       {"a0": np.arange(100.0), "a1": np.ones(1000)})
    start, end = _member_span(data, "a0.npy")
    cut = data[:start + 200] + data[end:]  # the central directory is intact, a0 is short
    refused(cut, "member 'a0' is corrupt or truncated")


def test_archive_without_manifest():
    refused(_archive({"a0.npy": _npy(np.ones(2))}), "not a checkpoint .*no manifest")


# ------------------------------------------------------------------ corrupt members

@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_corrupted_member_data(compression):
    data = _checkpoint(_TENSOR_A0, {"a0": np.arange(1000.0)}, compression=compression)
    start, end = _member_span(data, "a0.npy")
    flipped = bytearray(data)
    flipped[(start + end) // 2] ^= 0xFF
    refused(bytes(flipped), "member 'a0' is corrupt or truncated")


def test_encrypted_and_oddly_compressed_members():
    data = _checkpoint(_TENSOR_A0, {"a0": np.ones(4)})
    refused(_patch_entry(data, "a0.npy", flag_bits=1), "member 'a0' is encrypted")
    bz = _archive({"a0.npy": _npy(np.ones(4)),
                   "__ember_manifest__.npy": _npy(np.array(_manifest_text(_TENSOR_A0)))},
                  zipfile.ZIP_BZIP2)
    refused(bz, "compression method 12")
    refused(_patch_entry(data, "a0.npy", flag_bits=0x20), "member 'a0' .*patched data")
    refused(_patch_entry(data, "a0.npy", flag_bits=0x40), "member 'a0' .*strong encryption")


@pytest.mark.parametrize("member,match", [
    (b"\x93NUMPX\x01\x00" + bytes(20), "is not a .npy array"),
    (b"\x93NUMPY\x09\x00" + bytes(20), "is not a .npy array"),
    (b"\x93NUMPY\x01", "truncated"),
    (_raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2,)"), "unreadable .npy header"),
    (_raw_npy("-" * 9000 + "1"), "unreadable .npy header"),
    (_raw_npy("(" * 300 + ")" * 300), "unreadable .npy header"),
    (_raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1}"),
     "malformed .npy header"),
    (_raw_npy("[1, 2]"), "malformed .npy header"),
    (_raw_npy("{'descr': '<f8', 'fortran_order': 0, 'shape': (2,)}"), "malformed .npy header"),
    (_raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': [2]}"), "malformed shape"),
    (_raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2.0,)}"), "malformed shape"),
    (_raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (True,)}"), "malformed shape"),
    (_raw_npy("{'descr': 1}" + " " * 20000), "20012-byte .npy header, over the limit of 10000"),
    (_raw_npy("{'descr': 1}" + " " * 70000, version=(2, 0)), "over the limit of 10000"),
])
def test_bad_npy_headers(member, match):
    refused(_checkpoint(_TENSOR_A0, {"a0": member}), match)


@pytest.mark.parametrize("descr,match", [
    ("'|O'", "holds Python objects"), ("'<U5'", "not a number type"),
    ("'|S3'", "not a number type"), ("'|V8'", "not a number type"),
    ("'<M8[s]'", "not a number type"), ("'<f3'", "not a number type"),
    ("'x9'", "not a number type"), ("'f8,f8'", "not a number type"),
    ("[('a', '<f8')]", "not a number type"), ("('<f8', (2,))", "not a number type"),
    ("None", "not a number type"),
])
def test_bad_member_dtypes(descr, match):
    member = _raw_npy(f"{{'descr': {descr}, 'fortran_order': False, 'shape': (1,)}}", bytes(8))
    err = refused(_checkpoint({"ndarray": "a0"}, {"a0": member}), match)
    assert "member 'a0'" in str(err)


def test_real_object_string_and_void_arrays_are_refused():
    objects = np.empty(2, dtype=object)
    objects[:] = [1, "x"]
    buf = io.BytesIO()
    np.save(buf, objects, allow_pickle=True)
    cases = {"holds Python objects": buf.getvalue(), "<U3": _npy(np.array(["abc"])),
             "V4": _npy(np.zeros(2, dtype="V4"))}
    for match, member in cases.items():
        refused(_checkpoint({"ndarray": "a0"}, {"a0": member}), match)


@pytest.mark.parametrize("shape,match", [
    ((-1, 4), "invalid shape"), ((4, -8), "invalid shape"), ((1,) * 65, "invalid shape"),
    ((0, 10**30), "overflows"), ((0, 2**40, 2**40), "overflows"), ((10**30,), "overflows"),
    ((2**32, 2**32), "overflows"), ((2**40,), "declares 8796093022208 bytes of data"),
    ((3, 0, 5), "declares 0 bytes of data"),
])
def test_bad_shapes(shape, match):
    text = f"{{'descr': '<f8', 'fortran_order': False, 'shape': {shape!r}}}"
    refused(_checkpoint({"ndarray": "a0"}, {"a0": _raw_npy(text, bytes(8))}), match)


def test_data_size_not_matching_the_shape():
    short = _npy(np.ones(10))[:-8]  # header says 80 bytes, 72 follow
    refused(_checkpoint(_TENSOR_A0, {"a0": short}), "declares 80 bytes.*holds 72")
    long = _npy(np.ones(10)) + bytes(8)
    refused(_checkpoint(_TENSOR_A0, {"a0": long}), "declares 80 bytes.*holds 88")


# ------------------------------------------------------------------ member names

@pytest.mark.parametrize("name", ["a0", "../a0.npy", "dir/a0.npy", "x.npy", "a0.npy.npy",
                                  "a-1.npy", "a\u0661.npy"])
def test_unexpected_member_names(name):
    members = {name: _npy(np.ones(2)),
               "__ember_manifest__.npy": _npy(np.array(_manifest_text(None)))}
    refused(_archive(members), "unexpected member")


def test_duplicate_member_names():
    buf = io.BytesIO()
    with pytest.warns(UserWarning, match="Duplicate name"):
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("a0.npy", _npy(np.ones(2)))
            zf.writestr("a0.npy", _npy(np.ones(10**4)))
            zf.writestr("__ember_manifest__.npy", _npy(np.array(_manifest_text(_TENSOR_A0))))
    refused(buf.getvalue(), "several members of one name")


@pytest.mark.parametrize("root,match", [
    (_TENSOR_A0, "refers to member 'a0', which the file does not hold"),
    ({"ndarray": "a7"}, "refers to member 'a7', which the file does not hold"),
    ({"ndarray": "__ember_manifest__"}, "is not an array member name"),
    ({"tensor": "zz", "requires_grad": False}, "'zz' is not an array member name"),
    ({"tensor": ["a0"], "requires_grad": False}, r"\['a0'\] is not an array member name"),
    ({"ndarray": 0}, "0 is not an array member name"),
])
def test_manifest_naming_missing_or_bad_members(root, match):
    err = refused(_checkpoint(root, {"a1": np.ones(2)}), match)
    assert "malformed manifest" in str(err)


def test_one_member_used_as_tensor_and_array():
    root = {"list": [_TENSOR_A0, {"ndarray": "a0"}]}
    refused(_checkpoint(root, {"a0": np.ones(2)}), "both as a tensor and as an array")


def test_member_dtypes_a_tensor_cannot_hold():
    data = _checkpoint(_TENSOR_A0, {"a0": np.ones(2, dtype=np.uint32)})
    refused(data, "member 'a0' has dtype uint32, which an ember tensor cannot hold")
    assert load_bytes(_checkpoint({"ndarray": "a0"}, {"a0": np.ones(2, np.uint32)})).sum() == 2
    refused(_checkpoint({"tensor": "a0", "requires_grad": True}, {"a0": np.arange(3)}),
             "tensor 'a0' of dtype int64 requires grad")


# ------------------------------------------------------------------ the manifest itself

def test_deeply_nested_manifest():
    for text in ("[" * 100_000, "[" * 100_000 + "]" * 100_000,
                 '{"format": "ember-npz-1", "root": ' + '{"list": [' * 50_000):
        err = refused(_checkpoint(None, manifest=text), "nests [0-9]+ levels deep")
        assert "limit of 512" in str(err)
    root = 0
    for _ in range(256):  # one level past the limit
        root = {"list": [root]}
    refused(_checkpoint(root), "nests 513 levels deep, over the limit of 512")


@pytest.mark.parametrize("text,match", [
    ("", "not valid JSON"), ("{", "not valid JSON"), ("{'format': 1}", "not valid JSON"),
    ('{"format": "ember-npz-1", "root": 1' + "0" * 5000 + "}", "not valid JSON"),
    ("[1, 2]", "unknown checkpoint format"), ('"text"', "unknown checkpoint format"),
    ("17", "unknown checkpoint format"), ('{"format": "other", "root": 1}', "unknown"),
    ('{"root": 1}', "unknown checkpoint format"),
    ('{"format": "ember-npz-1"}', "malformed manifest: no root"),
])
def test_manifest_not_json_or_the_wrong_type(text, match):
    refused(_checkpoint(None, manifest=text), match)


@pytest.mark.parametrize("manifest,match", [
    (np.array(5), "has dtype '<i8', which is not a text type"),
    (np.frombuffer(b"{\0\0\0\0\0\x11\0", "<U2").reshape(()), "invalid characters"),
    (np.frombuffer(b"{\0\0\0\0\0\0\x80", "<U2").reshape(()), "invalid characters"),
    (_raw_npy("{'descr': '<U0', 'fortran_order': False, 'shape': ()}"),
     "has dtype '<U0', which is not a text type"),
    (np.array(b'{"format": "ember-npz-1", "root": 1}'), "which is not a text type"),
    (np.array([_manifest_text(1)] * 2), r"the manifest has shape \(2,\), not \(\)"),
])
def test_manifest_member_of_the_wrong_kind(manifest, match):
    member = manifest if isinstance(manifest, bytes) else _npy(manifest)
    refused(_archive({"__ember_manifest__.npy": member}), match)


@pytest.mark.parametrize("root,match", [
    ([1, 2], "a bare JSON list"),
    ({"list": [1, [2]]}, "a bare JSON list"),
    ({"foo": 1}, r"unknown node with keys \['foo'\]"),
    ({"list": 1, "tuple": 2}, "unknown node"),
    ({"dict": "abc"}, "a dict holds 'abc', not a JSON list"),
    ({"odict": {"a": 1}}, "not a JSON list"),
    ({"list": 5}, "a list holds 5"), ({"tuple": None}, "a tuple holds None"),
    ({"dict": [[1]]}, r"a dict entry \[1\] is not a \[key, value\] pair"),
    ({"dict": [[1, 2, 3]]}, "is not a"), ({"dict": [5]}, "is not a"),
    ({"dict": [[[1], 2]]}, r"dict key \[1\] is not"),
    ({"dict": [[{"a": 1}, 2]]}, "dict key .* is not"),
    ({"dict": [[{"tuple": "abc"}, 2]]}, "dict key .* is not"),
    ({"tensor": "a0", "requires_grad": "yes"}, "requires_grad of 'a0' is 'yes', not a bool"),
    ({"tensor": "a0", "requires_grad": 10**40}, "requires_grad of 'a0' is 1000"),
    ({"scalar": 1, "dtype": "|O"}, "holds Python objects"),
    ({"scalar": 1, "dtype": "foo"}, "dtype 'foo', which is not a number type"),
    ({"scalar": 1, "dtype": ["<f8"]}, "which is not a number type"),
    ({"scalar": 1, "dtype": "<U4"}, "which is not a number type"),
    ({"scalar": 300, "dtype": "|i1"}, "scalar 300 is out of range for dtype |i1"),
    ({"scalar": -1, "dtype": "|u1"}, "out of range"),
    ({"scalar": 10**30, "dtype": "<i8"}, "out of range"),
    ({"scalar": 10**400, "dtype": "<f8"}, "out of range"),
    ({"scalar": 1e300, "dtype": "<f4"}, "out of range"),
    ({"scalar": 1e300, "dtype": "<c8"}, "out of range"),
    ({"scalar": "1.5", "dtype": "<f8"}, "scalar '1.5' does not fit dtype <f8"),
    ({"scalar": 1.5, "dtype": "<i8"}, "does not fit"),
    ({"scalar": 1, "dtype": "|b1"}, "does not fit"),
    ({"scalar": True, "dtype": "<i8"}, "does not fit"),
    ({"scalar": [1], "dtype": "<f8"}, "does not fit"),
])
def test_malformed_manifest_nodes(root, match):
    err = refused(_checkpoint(root, {"a0": np.ones(2)}), match)
    assert "malformed manifest" in str(err) or "dtype" in str(err)


def test_valid_scalars_and_special_floats_still_load():
    root = {"list": [{"scalar": 1e300, "dtype": "<f8"}, {"scalar": -128, "dtype": "|i1"},
                     {"scalar": True, "dtype": "|b1"}, {"scalar": 3, "dtype": "<f4"}]}
    out = load_bytes(_checkpoint(root))
    assert [type(x) for x in out] == [np.float64, np.int8, np.bool_, np.float32]
    assert out == [1e300, -128, True, 3.0]
    text = '{"format": "ember-npz-1", "root": {"list": [NaN, 1e999]}}'
    special = load_bytes(_checkpoint(None, manifest=text))
    assert special[0] != special[0] and special[1] == float("inf")


# ------------------------------------------------------------------ nothing half-applied

def test_map_location_only_runs_after_the_whole_file_checks_out():
    data = _checkpoint({"dict": [["a", _TENSOR_A0],
                                 ["b", {"tensor": "a1", "requires_grad": False}]]},
                       {"a0": np.ones(3, np.float32), "a1": np.ones(3, np.float32)})
    start, end = _member_span(data, "a1.npy")
    corrupt = bytearray(data)
    corrupt[end - 1] ^= 0xFF  # bad CRC in the second member
    calls = []
    refused(bytes(corrupt), "member 'a1' is corrupt",
             map_location=lambda t, loc: calls.append(loc) or t)
    assert calls == []
    out = load_bytes(data, map_location=lambda t, loc: calls.append(loc) or t * 2)
    assert calls == ["cpu", "cpu"] and out["a"].tolist() == [2.0] * 3


def test_module_state_is_untouched_by_a_bad_file():
    model = ember.nn.Linear(3, 2)
    before = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    sd = {k: v.detach() + 1 for k, v in model.state_dict().items()}
    buf = io.BytesIO()
    ember.save(sd, buf)
    data = buf.getvalue()
    start, end = _member_span(data, "archive/data/1")  # the bias, read after the weight
    broken = data[:end - 1] + bytes([data[end - 1] ^ 0xFF]) + data[end:]
    with pytest.raises(CheckpointError):
        model.load_state_dict(ember.load(io.BytesIO(broken)))
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v.detach().numpy(), before[k])
    model.load_state_dict(ember.load(io.BytesIO(data)))
    np.testing.assert_array_equal(model.bias.detach().numpy(), before["bias"] + 1)


# ------------------------------------------------------------------ fuzzing

def _fuzz_bases():
    root = {"odict": [["w", _TENSOR_A0], ["x", {"ndarray": "a1"}],
                      ["s", {"scalar": 2, "dtype": "<i4"}], ["t", {"tuple": [1, "a", None]}]]}
    arrays = {"a0": np.arange(12, dtype=np.float32).reshape(3, 4), "a1": np.arange(5)}
    return [_checkpoint(root, arrays), _checkpoint(root, arrays, compression=zipfile.ZIP_DEFLATED)]


_BASES = _fuzz_bases()


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(which=st.sampled_from([0, 1]),
       flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), max_size=4),
       cut=st.none() | st.integers(0, 10**6))
def test_fuzzed_files_load_or_raise_checkpoint_error(which, flips, cut):
    data = bytearray(_BASES[which])
    for pos, xor in flips:
        data[pos % len(data)] ^= xor
    if cut is not None:
        data = data[:cut % (len(data) + 1)]
    try:
        load_bytes(bytes(data))
    except CheckpointError as exc:
        assert str(exc).startswith("ember.load: ")
