"""Tests for ember._printing: tensor text must equal PyTorch's, character for character.

The real ``ember.Tensor`` is written elsewhere, so these tests drive ``tensor_repr`` through
``Probe``, a stand-in exposing exactly the protocol the printer may use. Oracle tests build the
same tensor in PyTorch and compare whole strings; literal tests pin a few well-known outputs
so that the module is still checked where PyTorch is not installed.
"""
from __future__ import annotations

import contextlib
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ember import _dtypes
from ember._device import device
from ember._printing import (
    get_printoptions,
    printoptions,
    set_printoptions,
    tensor_repr,
)

NAN, INF = math.nan, math.inf
DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


# ---------------------------------------------------------------- helpers
class Probe:
    """The tensor protocol the printer relies on, wrapped around a NumPy array."""

    def __init__(self, array, *, requires_grad=False, grad_fn=None, dev="cpu"):
        self._data = np.asarray(array)
        self.dtype = _dtypes.from_numpy_dtype(self._data.dtype)
        self.device = device(dev)
        self.requires_grad = requires_grad
        self.grad_fn = grad_fn
        self.is_leaf = grad_fn is None
        self.shape = tuple(self._data.shape)
        self._fw = None  # the forward-mode tangent (none)


def backward_node(name):
    """An object standing in for a grad_fn node whose class is called ``name``."""
    return type(name, (), {})()


def torch_or_skip():
    return pytest.importorskip("torch")


def torch_repr(torch, array):
    return repr(torch.from_numpy(np.array(array, copy=True)))


def assert_same(array, **options):
    """ember's text for ``array`` equals PyTorch's, under the same print options."""
    torch = torch_or_skip()
    array = np.asarray(array)
    with printoptions(**options), torch_printoptions(torch, **options):
        assert tensor_repr(Probe(array)) == torch_repr(torch, array)


@contextlib.contextmanager
def torch_printoptions(torch, **options):
    """Apply print options to PyTorch for a block, restoring them afterwards."""
    saved = torch._tensor_str.get_printoptions()
    torch.set_printoptions(**options)
    try:
        yield
    finally:
        torch.set_printoptions(**saved)


@pytest.fixture(autouse=True)
def restore_state():
    """Every test starts and ends with default print options and default dtype."""
    yield
    set_printoptions(profile="default")
    _dtypes.set_default_dtype(_dtypes.float32)
    try:
        import torch
    except ImportError:
        return
    torch.set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)


def f32(values):
    return np.array(values, dtype=np.float32)


# ---------------------------------------------------------------- cases against the oracle
CASES = {
    # 0-d
    "scalar_int_valued": f32(3.0),
    "scalar_negative": f32(-36.0),
    "scalar_fraction": f32(0.1234567),
    "scalar_tiny": f32(1e-5),
    "scalar_huge": f32(1e10),
    "scalar_nan": f32(NAN),
    "scalar_inf": f32(-INF),
    "scalar_neg_zero": f32(-0.0),
    "scalar_zero": f32(0.0),
    "scalar_true": np.array(True),
    "scalar_false": np.array(False),
    "scalar_int64": np.array(-7, dtype=np.int64),
    "scalar_int16": np.array(12, dtype=np.int16),
    "scalar_float64": np.array(2.5, dtype=np.float64),
    "scalar_float16": np.array(0.1, dtype=np.float16),
    "scalar_complex": np.array(1 + 2j, dtype=np.complex64),
    "scalar_complex_neg_imag": np.array(1.5 - 0.0j, dtype=np.complex64),
    "scalar_complex_nan": np.array(complex(NAN, INF), dtype=np.complex128),
    # 1-d floats
    "int_valued": f32([2, 8, 18]),
    "int_valued_negative": f32([-1, 20, -300]),
    "fractional": f32([1.5, -2.25, 3.125]),
    "rounding": f32([0.12345, 0.99995, 1.00005]),
    "single": f32([4.5]),
    # scientific notation
    "sci_small": f32([1e-5, 1.0]),
    "sci_large": f32([1e9, 1.0]),
    "sci_ratio": f32([1.0, 2000.0]),
    "no_sci_ratio_1000": f32([1.0, 1000.0]),
    "no_sci_1e8": f32([1e8]),
    "sci_above_1e8": f32([1.5e8]),
    "sci_min_just_below": f32([9.9e-5, 0.05]),
    "sci_fraction_mixed": f32([1.2345e-7, -3.5e3, 12.0]),
    "sci_int_valued": f32([1e10, 2e10, 3.0]),
    "sci_float64_huge": np.array([1e-300, 1e300, -2.0], dtype=np.float64),
    # nan, inf, -inf
    "nonfinite_int_mode": f32([NAN, 1.0, INF, -INF]),
    "nonfinite_fraction": f32([NAN, 1.5, -INF]),
    "nonfinite_sci": f32([NAN, 1e-8, INF]),
    "all_nan": f32([NAN, NAN]),
    "all_inf": f32([INF, -INF]),
    "zero_and_nan": f32([0.0, NAN]),
    "all_zero": f32([0.0, 0.0, 0.0]),
    "wide_nan_narrow_values": f32([NAN, 0.5]),
    # negative zero
    "neg_zero_int_mode": f32([-0.0, 1.0]),
    "neg_zero_fraction": f32([-0.0, 1.5]),
    "neg_zero_only": f32([-0.0, 0.0]),
    "neg_zero_sci": f32([-0.0, 1e-9]),
    # integers and bools
    "int64": np.array([1, -20, 300], dtype=np.int64),
    "int32": np.array([1, -20, 300], dtype=np.int32),
    "int16": np.array([7, 8], dtype=np.int16),
    "int8": np.array([-128, 127], dtype=np.int8),
    "uint8": np.array([0, 255], dtype=np.uint8),
    "int64_extremes": np.array([np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max]),
    "bool": np.array([True, False, True]),
    "bool_2d": np.array([[True], [False]]),
    # complex
    "complex": np.array([1 + 2j, -3.5 - 0.25j], dtype=np.complex64),
    "complex128": np.array([1 + 2j, 0.5j], dtype=np.complex128),
    "complex_int_valued": np.array([1 + 2j, -3 - 4j], dtype=np.complex64),
    "complex_nonfinite": np.array([complex(NAN, 1), complex(1, -INF), 2 + 0j], dtype=np.complex64),
    "complex_sci": np.array([1e-6 + 1j, 5e9 - 2j], dtype=np.complex128),
    "complex_neg_zero_imag": np.array([complex(1, -0.0), 2 + 1j], dtype=np.complex64),
    "complex_2d": (np.arange(6) + 1j * np.arange(6)[::-1]).reshape(2, 3).astype(np.complex64),
    # float16 and float64
    "float16": np.array([0.1, 2.5, -65504.0], dtype=np.float16),
    "float16_subnormal": np.array([6e-8, 1.0], dtype=np.float16),
    "float16_int_valued": np.array([1, 2, 2048], dtype=np.float16),
    "float64": np.array([0.1, 0.2, 0.3], dtype=np.float64),
    "float64_int_valued": np.array([1.0, 2.0], dtype=np.float64),
    # empty tensors
    "empty": f32([]),
    "empty_0x3": np.zeros((0, 3), dtype=np.float32),
    "empty_2x0x4": np.zeros((2, 0, 4), dtype=np.float32),
    "empty_int64": np.zeros(0, dtype=np.int64),
    "empty_int32_2d": np.zeros((0, 2), dtype=np.int32),
    "empty_bool": np.zeros(0, dtype=bool),
    "empty_float64": np.zeros(0, dtype=np.float64),
    "empty_complex64": np.zeros(0, dtype=np.complex64),
    "empty_float16_2d": np.zeros((3, 0), dtype=np.float16),
    # layout in n dimensions
    "2d": f32([[1, 2.5], [-3, 4]]),
    "2d_column": f32([[1], [2], [3]]),
    "2d_row": f32([[1, 2, 3]]),
    "3d": np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7,
    "4d": np.arange(36, dtype=np.int64).reshape(2, 3, 2, 3),
    "4d_ones_sizes": np.ones((1, 1, 1, 1), dtype=np.float32),
    "5d": np.arange(32, dtype=np.float64).reshape(2, 2, 2, 2, 2),
    "3d_unit_middle": np.arange(6, dtype=np.float32).reshape(3, 1, 2) * 1.5,
    # summarisation above the threshold
    "summary_1d_float": np.arange(1001, dtype=np.float32),
    "summary_1d_int": np.arange(2000, dtype=np.int64),
    "summary_1d_fraction": np.linspace(-1, 1, 1500, dtype=np.float32),
    "summary_2d": np.arange(1600, dtype=np.float32).reshape(40, 40) / 3,
    "summary_2d_short_rows": np.arange(2000, dtype=np.int32).reshape(2, 1000),
    "summary_2d_short_cols": np.arange(2000, dtype=np.float32).reshape(1000, 2),
    "summary_3d": np.arange(1100, dtype=np.float64).reshape(10, 10, 11),
    "summary_4d": np.arange(1125, dtype=np.float32).reshape(5, 5, 5, 9),
    "summary_complex": (np.arange(1200) * (1 + 0.5j)).astype(np.complex64),
    "summary_bool": np.arange(1200) % 3 == 0,
    "summary_hidden_extremes": np.concatenate([f32([1, 2, 3]), f32([1e-9] * 1000), f32([4, 5, 6])]),
    "summary_hidden_nan": np.concatenate([f32([1, 2, 3]), f32([NAN] * 1000), f32([4, 5, 6])]),
    # wrapping at linewidth
    "wrap_1d": np.arange(30, dtype=np.float32) * 1.5,
    "wrap_1d_ints": np.arange(100, dtype=np.int64) * 12345,
    "wrap_2d": np.arange(90, dtype=np.float32).reshape(3, 30) / 3,
    "wrap_3d": np.arange(120, dtype=np.float32).reshape(2, 2, 30),
    "wrap_complex": (np.arange(20) * (1.5 - 2j)).astype(np.complex64),
    "wrap_sci": np.geomspace(1e-10, 1e10, 25).astype(np.float32),
    # the dtype suffix wraps onto its own line when the last line is long
    "suffix_wraps_1d": np.arange(17, dtype=np.float64) * 1.25,
    "suffix_fits_1d": np.arange(13, dtype=np.float64) * 1.25,
    "suffix_wraps_2d": np.arange(40, dtype=np.int32).reshape(2, 20),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(name):
    assert_same(CASES[name])


@pytest.mark.parametrize("length", range(10, 20))
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex64])
def test_dtype_suffix_line_break_boundary(length, dtype):
    """Around the length where ``dtype=...`` no longer fits on the last line."""
    assert_same((np.arange(length) * 1.25).astype(dtype))


# ---------------------------------------------------------------- literal expectations
@pytest.mark.parametrize(
    ("array", "expected"),
    [
        (f32(3.0), "tensor(3.)"),
        (f32(-36.0), "tensor(-36.)"),
        (np.array(True), "tensor(True)"),
        (f32([2, 8, 18]), "tensor([ 2.,  8., 18.])"),
        (f32([1.5, -2.25]), "tensor([ 1.5000, -2.2500])"),
        (f32([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
        (f32([NAN, 1.0, INF]), "tensor([nan, 1., inf])"),
        (f32([-0.0, 1.5]), "tensor([-0.0000, 1.5000])"),
        (np.array([1 + 2j, -3.5 - 0.25j], dtype=np.complex64),
         "tensor([ 1.0000+2.0000j, -3.5000-0.2500j])"),
        (np.array([True, False]), "tensor([ True, False])"),
        (np.array([1, 2], dtype=np.int32), "tensor([1, 2], dtype=torch.int32)"),
        (f32([]), "tensor([])"),
        (np.zeros((0, 3), dtype=np.float32), "tensor([], size=(0, 3))"),
        (np.zeros(0, dtype=np.int64), "tensor([], dtype=torch.int64)"),
        (np.zeros((2, 0, 4), dtype=np.int32), "tensor([], size=(2, 0, 4), dtype=torch.int32)"),
        (np.arange(2000), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
        (f32([[1, 2], [3, 4]]), "tensor([[1., 2.],\n        [3., 4.]])"),
        (np.arange(8).reshape(2, 2, 2),
         "tensor([[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]])"),
    ],
)
def test_literal_output(array, expected):
    assert tensor_repr(Probe(array)) == expected


def test_literal_summarised_matrix():
    expected = (
        "tensor([[   0,    1,    2,  ...,   37,   38,   39],\n"
        "        [  40,   41,   42,  ...,   77,   78,   79],\n"
        "        [  80,   81,   82,  ...,  117,  118,  119],\n"
        "        ...,\n"
        "        [1480, 1481, 1482,  ..., 1517, 1518, 1519],\n"
        "        [1520, 1521, 1522,  ..., 1557, 1558, 1559],\n"
        "        [1560, 1561, 1562,  ..., 1597, 1598, 1599]])"
    )
    assert tensor_repr(Probe(np.arange(1600).reshape(40, 40))) == expected


# ---------------------------------------------------------------- autograd suffixes
FLOAT_ARRAYS = {
    "vector": f32([1.5, 2.0]),
    "scalar": f32(2.0),
    "float64": np.arange(40, dtype=np.float64).reshape(2, 20),
    "complex": np.array([1 + 1j], dtype=np.complex64),
    "empty": np.zeros((0, 2), dtype=np.float32),
    "long_row": np.arange(13, dtype=np.float32) * 1.25,
}


@pytest.mark.parametrize("name", list(FLOAT_ARRAYS))
def test_requires_grad_suffix(name):
    torch = torch_or_skip()
    array = FLOAT_ARRAYS[name]
    expected = repr(torch.from_numpy(array.copy()).requires_grad_())
    assert tensor_repr(Probe(array, requires_grad=True)) == expected
    assert "requires_grad=True" in expected


@pytest.mark.parametrize("name", list(FLOAT_ARRAYS))
def test_grad_fn_suffix(name):
    torch = torch_or_skip()
    array = FLOAT_ARRAYS[name]
    result = torch.from_numpy(array.copy()).requires_grad_() * 1
    probe = Probe(array, requires_grad=True, grad_fn=backward_node("MulBackward0"))
    assert tensor_repr(probe) == repr(result)
    assert "grad_fn=<MulBackward0>" in repr(result)


def test_grad_fn_from_in_place_copy():
    torch = torch_or_skip()
    array = f32([1.0, 2.0, 3.0])
    weight = torch.ones(1, requires_grad=True)
    result = torch.from_numpy(array.copy())
    result[0:1] = weight  # an in-place write into a leaf: grad_fn becomes CopySlices
    probe = Probe(array, requires_grad=True, grad_fn=backward_node("CopySlices"))
    assert tensor_repr(probe) == repr(result)


def test_grad_fn_wins_over_requires_grad():
    probe = Probe(f32([1.0]), requires_grad=True, grad_fn=backward_node("AddBackward0"))
    assert tensor_repr(probe) == "tensor([1.], grad_fn=<AddBackward0>)"


def test_no_grad_suffix_when_not_required():
    assert tensor_repr(Probe(f32([1.0]))) == "tensor([1.])"


def test_suffix_order_dtype_then_grad_fn():
    torch = torch_or_skip()
    array = np.array([1.5, 2.5], dtype=np.float64)
    result = torch.from_numpy(array.copy()).requires_grad_() * 1
    expected = "tensor([1.5000, 2.5000], dtype=torch.float64, grad_fn=<MulBackward0>)"
    assert repr(result) == expected
    probe = Probe(array, requires_grad=True, grad_fn=backward_node("MulBackward0"))
    assert tensor_repr(probe) == expected


@pytest.mark.parametrize("linewidth", [20, 30, 45, 60])
def test_grad_suffixes_wrap_with_linewidth(linewidth):
    torch = torch_or_skip()
    array = np.arange(6, dtype=np.float64) * 0.5
    with printoptions(linewidth=linewidth), torch_printoptions(torch, linewidth=linewidth):
        result = torch.from_numpy(array.copy()).requires_grad_() * 1
        probe = Probe(array, requires_grad=True, grad_fn=backward_node("MulBackward0"))
        assert tensor_repr(probe) == repr(result)


# ---------------------------------------------------------------- dtype suffix rules
@pytest.mark.parametrize(
    "np_dtype",
    [np.float16, np.float32, np.float64, np.complex64, np.complex128,
     np.int8, np.int16, np.int32, np.int64, np.uint8, np.bool_],
)
@pytest.mark.parametrize("default", ["float32", "float64", "float16"])
def test_dtype_suffix_follows_default_dtype(np_dtype, default):
    torch = torch_or_skip()
    _dtypes.set_default_dtype(_dtypes.by_name(default))
    torch.set_default_dtype(getattr(torch, default))
    for array in (np.array([1, 0], dtype=np_dtype), np.zeros((0,), dtype=np_dtype),
                  np.array(1, dtype=np_dtype), np.zeros((2, 0), dtype=np_dtype)):
        assert tensor_repr(Probe(array)) == torch_repr(torch, array)


def test_dtype_suffix_literals_under_float64_default():
    _dtypes.set_default_dtype(_dtypes.float64)
    assert tensor_repr(Probe(np.array([1.0]))) == "tensor([1.])"
    assert tensor_repr(Probe(f32([1.0]))) == "tensor([1.], dtype=torch.float32)"
    assert tensor_repr(Probe(np.array([1j]))) == "tensor([0.+1.j])"
    assert tensor_repr(Probe(np.array([1j], dtype=np.complex64))) == (
        "tensor([0.+1.j], dtype=torch.complex64)"
    )


# ---------------------------------------------------------------- device suffix
# PyTorch adds ``device='<str(device)>'`` first among the suffixes whenever the device type
# differs from the default device (cpu); the rest keep their usual order and wrapping.
@pytest.mark.parametrize(
    ("probe", "expected"),
    [
        (Probe(f32([1, 2]), dev="cuda:0"), "tensor([1., 2.], device='cuda:0')"),
        (Probe(np.array([1.0, 2.0]), dev="cuda:0"),
         "tensor([1., 2.], device='cuda:0', dtype=torch.float64)"),
        (Probe(f32([1, 2]), dev="cuda:1", requires_grad=True),
         "tensor([1., 2.], device='cuda:1', requires_grad=True)"),
        (Probe(np.array([1, 2], dtype=np.int32), dev="cuda:0",
               grad_fn=backward_node("MulBackward0")),
         "tensor([1, 2], device='cuda:0', dtype=torch.int32, grad_fn=<MulBackward0>)"),
        (Probe(np.zeros((0, 3), dtype=np.int64), dev="cuda:0"),
         "tensor([], device='cuda:0', size=(0, 3), dtype=torch.int64)"),
        (Probe(f32(5.0), dev="cuda:0"), "tensor(5., device='cuda:0')"),
        (Probe(np.arange(12, dtype=np.float64) * 1.5, dev="cuda:0"),
         ("tensor([ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n"
          "        12.0000, 13.5000, 15.0000, 16.5000], device='cuda:0',\n"
          "       dtype=torch.float64)")),
    ],
)
def test_device_suffix(probe, expected):
    assert tensor_repr(probe) == expected


def test_device_suffix_wrapping_matches_torch_layout():
    """The cuda text is the cpu text with the device suffix inserted first."""
    torch = torch_or_skip()
    array = np.arange(12, dtype=np.float64) * 1.5
    cpu_text = torch_repr(torch, array)
    assert cpu_text == (
        "tensor([ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n"
        "        12.0000, 13.5000, 15.0000, 16.5000], dtype=torch.float64)"
    )
    assert tensor_repr(Probe(array)) == cpu_text


class FakeDeviceArray:
    """A non-NumPy array object (like a CuPy array) that copies to the host via ``get``."""

    def __init__(self, array):
        self.array = array

    def get(self):
        return self.array


def test_device_array_is_copied_to_host():
    probe = Probe(f32([1.5, 2.0]), dev="cuda:0")
    probe._data = FakeDeviceArray(f32([1.5, 2.0]))
    assert tensor_repr(probe) == "tensor([1.5000, 2.0000], device='cuda:0')"


# ---------------------------------------------------------------- print options
OPTION_SETS = [
    {"precision": 2},
    {"precision": 0},
    {"precision": 8},
    {"sci_mode": True},
    {"sci_mode": False},
    {"threshold": 5},
    {"threshold": 5, "edgeitems": 1},
    {"threshold": 5, "edgeitems": 0},
    {"edgeitems": 0},
    {"threshold": 10, "edgeitems": 5},
    {"linewidth": 40},
    {"linewidth": 10},
    {"linewidth": 200},
    {"profile": "short"},
    {"profile": "full"},
    {"profile": "full", "precision": 6},
    {"profile": "default"},
    {"profile": "unknown-name"},
]
OPTION_ARRAYS = {
    "int_valued": f32([2, 8, 18]),
    "fraction": f32([1.123456789, -22.5]),
    "sci": f32([1e-7, 3.0, NAN]),
    "zeros": f32([0.0, -0.0]),
    "huge_fixed": f32([1e20, 1.5]),
    "ints": np.arange(30, dtype=np.int64),
    "matrix": np.arange(48, dtype=np.float32).reshape(6, 8) / 3,
    "cube": np.arange(64, dtype=np.float64).reshape(4, 4, 4),
    "complex": (np.arange(12) * (0.5 + 1j)).astype(np.complex64),
    "long_1d": np.arange(1200, dtype=np.float32),
    "long_2d": np.arange(2500, dtype=np.int32).reshape(50, 50),
    "scalar": f32(1.23456789),
}


@pytest.mark.parametrize("options", OPTION_SETS, ids=repr)
@pytest.mark.parametrize("name", list(OPTION_ARRAYS))
def test_options_match_torch(options, name):
    assert_same(OPTION_ARRAYS[name], **options)


def test_defaults():
    assert get_printoptions() == DEFAULTS
    assert list(get_printoptions()) == list(DEFAULTS)


def test_get_printoptions_matches_torch_after_each_call():
    torch = torch_or_skip()
    calls = [
        {"precision": 2},
        {"threshold": 7, "sci_mode": True},
        {"edgeitems": 1},
        {"profile": "full"},
        {"profile": "short", "linewidth": 100},
        {"linewidth": 50, "sci_mode": False},
        {"profile": "default"},
    ]
    for call in calls:
        set_printoptions(**call)
        torch.set_printoptions(**call)
        assert get_printoptions() == torch._tensor_str.get_printoptions()


def test_set_and_get_round_trip():
    set_printoptions(precision=6, threshold=50, edgeitems=2, linewidth=100, sci_mode=True)
    saved = get_printoptions()
    assert saved == {"precision": 6, "threshold": 50, "edgeitems": 2,
                     "linewidth": 100, "sci_mode": True}
    set_printoptions(profile="default")
    assert get_printoptions()["precision"] == 4
    set_printoptions(**saved)
    assert get_printoptions() == saved


def test_sci_mode_resets_on_every_call():
    set_printoptions(sci_mode=True)
    set_printoptions(precision=3)
    assert get_printoptions()["sci_mode"] is None
    assert get_printoptions()["precision"] == 3


@pytest.mark.parametrize(
    ("profile", "expected"),
    [
        ("default", DEFAULTS),
        ("short", {**DEFAULTS, "precision": 2, "edgeitems": 2}),
        ("full", {**DEFAULTS, "threshold": math.inf}),
    ],
)
def test_profiles(profile, expected):
    set_printoptions(precision=9, threshold=3, edgeitems=9, linewidth=9)
    set_printoptions(profile=profile)
    assert get_printoptions() == expected


def test_profile_is_overridden_by_explicit_options():
    set_printoptions(profile="short", precision=5)
    assert get_printoptions()["precision"] == 5
    assert get_printoptions()["edgeitems"] == 2


def test_unknown_profile_changes_nothing_but_sci_mode():
    set_printoptions(precision=7, sci_mode=True)
    set_printoptions(profile="nonsense")
    assert get_printoptions() == {**DEFAULTS, "precision": 7}


def test_printoptions_context_restores():
    set_printoptions(precision=3, sci_mode=False)
    before = get_printoptions()
    with printoptions(precision=1, linewidth=30):
        assert get_printoptions()["precision"] == 1
        assert get_printoptions()["sci_mode"] is None
        assert tensor_repr(Probe(f32([1.25]))) == "tensor([1.2])"
    assert get_printoptions() == before


def test_printoptions_context_restores_after_error():
    before = get_printoptions()
    with pytest.raises(ValueError), printoptions(profile="full", sci_mode=True):
        raise ValueError
    assert get_printoptions() == before


def test_literal_option_effects():
    with printoptions(precision=2):
        assert tensor_repr(Probe(f32([1.12345]))) == "tensor([1.12])"
    with printoptions(threshold=5):
        assert tensor_repr(Probe(np.arange(10))) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    with printoptions(sci_mode=True):
        assert tensor_repr(Probe(f32([1.0, 2.0]))) == "tensor([1.0000e+00, 2.0000e+00])"
        assert tensor_repr(Probe(f32([0.0, NAN]))) == "tensor([0., nan])"
    with printoptions(edgeitems=0):
        assert tensor_repr(Probe(np.ones((2, 2)))) == (
            "tensor([[1., 1.],\n        [1., 1.]], size=(2, 2), dtype=torch.float64)"
        )
        assert tensor_repr(Probe(np.ones((40, 40), dtype=np.float32))) == (
            "tensor([...], size=(40, 40))"
        )


# ---------------------------------------------------------------- property test
FLOAT_DTYPES = [np.float16, np.float32, np.float64]
ALL_DTYPES = FLOAT_DTYPES + [np.complex64, np.complex128, np.int8, np.int32, np.int64,
                             np.uint8, np.bool_]
SPECIALS = [NAN, INF, -INF, 0.0, -0.0, 1e-30, 1e30, 5e-324, 1.7e308, 65504.0, 6e-8]

shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=6)
mantissas = st.one_of(
    st.floats(-1000, 1000),
    st.integers(-1000, 1000).map(float),
    st.sampled_from(SPECIALS),
)


@st.composite
def value_pools(draw, shape):
    """float64 values of ``shape``; big arrays repeat a drawn pool of up to 64 values."""
    pool = draw(hnp.arrays(np.float64, min(math.prod(shape), 64), elements=mantissas))
    return np.resize(pool, shape)


@st.composite
def arrays(draw):
    """Arrays of every dtype, with values around one random scale, plus specials."""
    dtype = np.dtype(draw(st.sampled_from(ALL_DTYPES)))
    shape = draw(st.one_of(shapes, st.sampled_from([(1001,), (3, 400), (11, 11, 11)])))
    base = draw(value_pools(shape))
    scale = 10.0 ** draw(st.integers(-12, 12))
    with np.errstate(all="ignore"):
        values = base * scale
        if dtype.kind == "c":
            other = draw(value_pools(shape))
            values = values + 1j * other * 10.0 ** draw(st.integers(-12, 12))
        elif dtype.kind == "b":
            values = values > 0
        elif dtype.kind in "iu":
            info = np.iinfo(dtype)
            values = np.nan_to_num(values).clip(info.min, info.max)
        return np.asarray(values.astype(dtype))


option_sets = st.fixed_dictionaries(
    {},
    optional={
        "precision": st.integers(0, 8),
        "threshold": st.integers(1, 100),
        "edgeitems": st.integers(0, 4),
        "linewidth": st.integers(1, 150),
        "sci_mode": st.sampled_from([None, True, False]),
        "profile": st.sampled_from(["default", "short", "full"]),
    },
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(array=arrays(), options=option_sets, grad=st.sampled_from(["none", "leaf", "clone"]))
def test_property_matches_torch(array, options, grad):
    torch = torch_or_skip()
    tensor = torch.from_numpy(np.array(array, copy=True))
    probe = Probe(array)
    if grad != "none" and array.dtype.kind in "fc":
        tensor = tensor.requires_grad_()
        probe.requires_grad = True
        if grad == "clone":  # clone keeps every value, nan and inf included (x * 1 may not)
            tensor = tensor.clone()
            probe.grad_fn, probe.is_leaf = backward_node("CloneBackward0"), False
    with printoptions(**options), torch_printoptions(torch, **options):
        assert tensor_repr(probe) == repr(tensor)
