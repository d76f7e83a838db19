"""The raw NumPy namespace that forwards and rules get (``ember._xp.NUMPY``): its shortcuts past
NumPy's Python-level wrappers must give what NumPy's functions give, bit for bit, view for view."""
import numpy as np
import pytest

from ember import _xp

X = _xp.NUMPY
DTYPES = (np.float32, np.float64, np.complex64, np.float16, np.int8, np.bool_)
SHAPES = ((), (1,), (3,), (1, 3), (2, 1), (0,), (0, 3), (2, 0, 1), (1, 1, 4), (2, 3, 4))
TARGETS = ((), (1,), (3,), (2, 3), (4, 1, 3), (0,), (2, 0, 3), (5, 2, 1), (1, 1, 4),
           (3, 1, 1, 4), (2, 2, 3, 4), 3, [2, 3], (-1, 3))


def _array(shape, dtype, layout):
    a = (np.random.default_rng(len(shape)).standard_normal(shape) * 3).astype(dtype)
    if layout == "transposed":
        a = a.T
    elif layout == "strided" and a.ndim:
        a = np.repeat(a, 2, axis=-1)[..., ::2]
    return a


def _outcome(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 - the same exception type is the point
        return None, type(e)


def _same(got, ref):
    assert type(got) is type(ref)
    if isinstance(ref, np.ndarray):
        assert (got.shape, got.dtype, got.strides) == (ref.shape, ref.dtype, ref.strides)
        assert got.flags.writeable == ref.flags.writeable
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_broadcast_to_is_numpys(shape, dtype, layout):
    a = _array(shape, dtype, layout)
    for target in TARGETS:
        (got, err), (ref, ref_err) = _outcome(X.broadcast_to, a, target), \
            _outcome(np.broadcast_to, a, target)
        assert err is ref_err, target
        if ref is not None:
            _same(got, ref)
            assert got.base is not None and np.shares_memory(got, a) == np.shares_memory(ref, a)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_reductions_are_numpys(shape, dtype):
    a = _array(shape, dtype, "contiguous")
    axes = [None] + list(range(-a.ndim, a.ndim)) + ([(0, -1)] if a.ndim > 1 else [])
    for name in ("sum", "max", "min"):
        for axis in axes:
            for keepdims in (False, True):
                got, err = _outcome(getattr(X, name), a, axis=axis, keepdims=keepdims)
                ref, ref_err = _outcome(getattr(np, name), a, axis=axis, keepdims=keepdims)
                assert err is ref_err, (name, axis)
                if ref is not None:
                    _same(got, ref)
    if a.dtype.kind == "b":
        _same(X.sum(a), np.sum(a))  # int64, as NumPy's
    if a.dtype.kind != "c":
        _same(X.sum(a, dtype=np.float64), np.sum(a, dtype=np.float64))


@pytest.mark.parametrize("shape", SHAPES)
def test_shape_functions_are_numpys(shape):
    a = _array(shape, np.float32, "contiguous")
    for axis in range(-a.ndim - 2, a.ndim + 2):
        got, err = _outcome(X.expand_dims, a, axis)
        ref, ref_err = _outcome(np.expand_dims, a, axis)
        assert err is ref_err
        if ref is not None:
            _same(got, ref)
    _same(X.reshape(a, (-1,)), np.reshape(a, (-1,)))
    if a.ndim >= 2:
        _same(X.swapaxes(a, 0, -1), np.swapaxes(a, 0, -1))
    for b in (a, _array(shape, np.float64, "transposed")):
        _same(X.zeros_like(b), np.zeros_like(b))
        _same(X.zeros_like(b, dtype=np.int8), np.zeros_like(b, dtype=np.int8))


@pytest.mark.parametrize("dtype", DTYPES + (None,))
@pytest.mark.parametrize("shape", SHAPES + (3, [2, 2]))
def test_ones_is_numpys(shape, dtype):
    _same(X.ones(shape, dtype), np.ones(shape, dtype))
    _same(X.ones(shape, dtype=dtype), np.ones(shape, dtype=dtype))


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4)])
def test_along_axis_is_numpys(shape):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape)
    for axis in range(-a.ndim - 1, a.ndim + 1):
        ax = axis % a.ndim
        for k in (1, shape[ax], 2 * shape[ax]):  # fewer, as many and more indices than entries
            index = rng.integers(-shape[ax], shape[ax], shape[:ax] + (k,) + shape[ax + 1:])
            got, err = _outcome(X.take_along_axis, a, index, axis=axis)
            ref, ref_err = _outcome(np.take_along_axis, a, index, axis=axis)
            assert err is ref_err
            if ref is None:
                continue
            _same(got, ref)
            out, ref_out = np.zeros_like(a), np.zeros_like(a)
            X.put_along_axis(out, index, ref * 2, axis)
            np.put_along_axis(ref_out, index, ref * 2, axis)
            _same(out, ref_out)
    index = np.zeros((1,) * a.ndim, dtype=np.int64)  # broadcasts against the ranges
    _same(X.take_along_axis(a, index, axis=0), np.take_along_axis(a, index, axis=0))
    for bad in (index.astype(np.float64), index[0]):  # not integers; a dim too few
        assert _outcome(X.take_along_axis, a, bad, axis=0)[1] is \
            _outcome(np.take_along_axis, a, bad, axis=0)[1] is not None


@pytest.mark.parametrize("dtype", DTYPES + (np.uint8, np.int64))
def test_full_is_numpys(dtype):
    for value in (0, 1, -1, 2.5, -0.0, float("nan"), float("inf"), True, 300, 2 ** 40):
        with np.errstate(all="ignore"):
            got, err = _outcome(X.full, (2, 3), value, dtype=dtype)
            ref, ref_err = _outcome(np.full, (2, 3), value, dtype=dtype)
        assert err is ref_err, value
        if ref is not None:
            _same(got, ref)
    _same(X.full((2,), 1), np.full((2,), 1))  # the dtype from the value


def test_other_arguments_go_to_numpy():
    """Scalars, lists and NumPy's other keywords take NumPy's own functions."""
    _same(X.sum(np.float32(2.0)), np.sum(np.float32(2.0)))
    assert X.sum([1, 2]) == 3
    _same(X.sum(np.ones((2, 3)), axis=1, where=np.array([True, False, True])),
          np.sum(np.ones((2, 3)), axis=1, where=np.array([True, False, True])))
    _same(X.max(np.arange(4.0), initial=9.0), np.max(np.arange(4.0), initial=9.0))
    _same(X.reshape(np.float64(1.0), (1, 1)), np.reshape(np.float64(1.0), (1, 1)))
    _same(X.broadcast_to([1.0, 2.0], (2, 2)), np.broadcast_to([1.0, 2.0], (2, 2)))
    _same(X.ones((2, 3), order="F"), np.ones((2, 3), order="F"))


@pytest.mark.parametrize("dtype, value", [
    (dtype, value) for dtype in (np.float16, np.float32, np.float64, np.complex64)
    for value in (0, 1, -0.25, 1e-3)] + [(np.int32, 0), (np.int32, 1), (np.uint8, 1)])
def test_constant_gives_what_the_python_number_gives(dtype, value):
    """``constant(v, dtype)`` stands in for the number ``v`` next to an array of ``dtype``:
    the same results bit for bit, the same result dtype; it is read-only and cached."""
    c = _xp.constant(value, dtype)
    assert c is _xp.constant(value, dtype)
    assert c.shape == () and c.dtype == dtype and not c.flags.writeable
    x = _array((2, 3), dtype, "contiguous")
    for op in (np.add, np.subtract, np.multiply, np.less_equal):
        for args, ref in (((x, c), (x, value)), ((c, x), (value, x))):
            got, expected = op(*args), op(*ref)
            assert got.dtype == expected.dtype
            assert np.array_equal(got.view(np.uint8), expected.view(np.uint8))
    with pytest.raises(ValueError):
        c[()] = 2
