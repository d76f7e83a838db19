"""The default device, the creation functions of ``ember/_factories.py``, ``complex``/``polar``
and the dtype helpers of ``ember/_dtype_utils.py``, each compared with PyTorch."""
import itertools
import math
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

from .oracle import Raised, assert_same_tensor, outcome

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
          "complex64", "complex128"]


def _outcome(fn, lib):
    """``fn(lib)``'s result and None, or None and what it raised (type name and text)."""
    r = outcome(fn, lib, quiet=True)
    return (None, r) if isinstance(r, Raised) else (r, None)


def _compare(fn):
    (e, e_err), (t, t_err) = _outcome(fn, ember), _outcome(fn, torch)
    assert e_err == t_err
    if t_err is None:
        assert_same_tensor(e, t, rtol=1e-6, atol=1e-6)
    return e, t


# --------------------------------------------------------------------------- the default device


@pytest.fixture
def restore_default_device():
    yield
    ember.set_default_device(None)
    torch.set_default_device(None)


FACTORIES = {
    "tensor": lambda lib: lib.tensor([1.0, 2.0]),
    "zeros": lambda lib: lib.zeros(2, 3),
    "ones": lambda lib: lib.ones(2),
    "empty": lambda lib: lib.empty(2),
    "full": lambda lib: lib.full((2,), 3.0),
    "arange": lambda lib: lib.arange(4),
    "linspace": lambda lib: lib.linspace(0, 1, 3),
    "logspace": lambda lib: lib.logspace(0, 1, 3),
    "eye": lambda lib: lib.eye(2),
    "rand": lambda lib: lib.rand(2),
    "randn": lambda lib: lib.randn(2),
    "randint": lambda lib: lib.randint(0, 3, (2,)),
    "randperm": lambda lib: lib.randperm(3),
    "as_tensor": lambda lib: lib.as_tensor([1, 2]),
    "asarray": lambda lib: lib.asarray([1, 2]),
    "scalar_tensor": lambda lib: lib.scalar_tensor(1.0),
    "tril_indices": lambda lib: lib.tril_indices(3, 3),
    "hann_window": lambda lib: lib.hann_window(4),
    "Linear": lambda lib: lib.nn.Linear(2, 2).weight,
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factories_use_the_default_device_like_pytorch(name, restore_default_device):
    for lib in (ember, torch):
        lib.set_default_device("cpu")
    e, t = FACTORIES[name](ember), FACTORIES[name](torch)
    assert str(e.device) == str(t.device) == "cpu"
    if ember.cuda.is_available():
        return
    for lib in (ember, torch):  # accepted; the first factory call refuses it
        lib.set_default_device("cuda")
    (_, e_err), (_, t_err) = _outcome(FACTORIES[name], ember), _outcome(FACTORIES[name], torch)
    assert e_err == t_err == ("AssertionError", "Torch not compiled with CUDA enabled")


def test_default_device_getters_and_context_like_pytorch(restore_default_device):
    x = {lib: lib.ones(2) for lib in (ember, torch)}
    for lib in (ember, torch):
        assert repr(lib.get_default_device()) == "device(type='cpu')"
        with lib.device("cpu") as d:
            assert repr(d) == "device(type='cpu')" and str(lib.zeros(1).device) == "cpu"
        lib.set_default_device(lib.device("cpu", 0))
        assert str(lib.get_default_device()) == "cpu:0"
        lib.set_default_device(None)
        assert str(lib.get_default_device()) == "cpu"
        assert str(lib.zeros(1, device="cpu").device) == "cpu"
    if not ember.cuda.is_available():
        for lib in (ember, torch):
            lib.set_default_device("cuda")
            # made from another tensor, or given a device: not affected
            assert str(lib.zeros_like(x[lib]).device) == "cpu"
            assert str(lib.zeros(1, device="cpu").device) == "cpu"
            with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled$"):
                lib.get_default_device()
            lib.set_default_device(None)
            with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled$"):
                with lib.device("cuda"):
                    lib.ones(1)
            assert str(lib.ones(1).device) == "cpu"  # the block's default ended with it
    (_, e_err), (_, t_err) = (_outcome(lambda lib: lib.set_default_device("foo"), lib)
                              for lib in (ember, torch))
    assert e_err == t_err and e_err[0] == "RuntimeError"


# --------------------------------------------------------------------------- logspace, range...

LOGSPACE = [(0, 2, 3, 10.0, None), (0, 2, 3, 2, None), (-1, 1, 5, 10.0, "float64"),
            (0, 2, 3, 10.0, "int64"), (-1, 1, 5, 10.0, "int32"), (0, 10, 5, 10.0, "uint8"),
            (1, 3, 3, -2.0, None), (1, 3, 3, -2, "int64"), (0, 1, 1, 10.0, None),
            (0, 1, 0, 10.0, None), (0.5, -1.5, 4, 3.0, "float64"), (0, 1, 3, 10.0, "complex64"),
            (0, 1, 2, 10.0, "bool"), (0, 1, -1, 10.0, None)]


@pytest.mark.parametrize("start,end,steps,base,dtype", LOGSPACE)
def test_logspace_like_pytorch(start, end, steps, base, dtype):
    _compare(lambda lib: lib.logspace(start, end, steps, base,
                                      dtype=dtype and getattr(lib, dtype)))


def test_logspace_takes_0_dim_tensors_like_pytorch():
    _compare(lambda lib: lib.logspace(lib.tensor(0), lib.tensor(1.0), 3))
    _compare(lambda lib: lib.logspace(lib.tensor([0.0]), 1.0, 3))


@pytest.mark.parametrize("args", [(1, 4), (1, 4, 0.5), (0, 1, 0.3), (4,), (3, 1), (1, 3, 0),
                                  (3, 1, -0.5)])
def test_range_like_pytorch(args):
    _compare(lambda lib: lib.range(*args))
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="^torch.range is deprecated"):
            lib.range(0, 1)


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window",
                                  "bartlett_window", "kaiser_window"])
@pytest.mark.parametrize("args", [(0,), (1,), (5,), (6, False), (4, True), (-1,)])
@pytest.mark.parametrize("dtype", [None, "float64", "int64", "complex64"])
def test_windows_like_pytorch(name, args, dtype):
    _compare(lambda lib: getattr(lib, name)(*args, dtype=dtype and getattr(lib, dtype)))


def test_window_parameters_like_pytorch():
    _compare(lambda lib: lib.hamming_window(5, True, 0.5, 0.5))
    _compare(lambda lib: lib.kaiser_window(5, False, 5.0))


def test_asarray_shares_and_copies_like_pytorch():
    for lib in (ember, torch):
        a = np.ones(3)
        t = lib.asarray(a)
        t[0] = 5
        assert a[0] == 5  # shares the array's memory
        lib.asarray(a, copy=True)[1] = 7
        assert a[1] == 1
        x = lib.ones(2)
        assert lib.asarray(x) is x
        assert lib.asarray(x, dtype=lib.float64).dtype == lib.float64
        assert lib.asarray(x, requires_grad=True) is x and x.requires_grad  # (x itself is set)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = lib.asarray(x, dtype=lib.float64)  # a copy in the graph, with a warning
            z = lib.asarray(x, copy=True)  # none here
        assert len(caught) == 1 and str(caught[0].message).startswith(
            "torch.asarray: unspecified requires_grad now defaults to obj.requires_grad")
        assert y.requires_grad and y.grad_fn is not None and z.requires_grad
        assert not lib.asarray(x, copy=True, requires_grad=False).requires_grad
        with pytest.raises(ValueError, match="^can't alias tensor with dtype 'Double' into "
                                             "dtype 'Float'.$"):
            lib.asarray(a, copy=False, dtype=lib.float32)
    for obj, dtype in (([1, 2], None), (3.5, None), ([1.5], "int64"), (np.ones(2, np.float32),
                                                                       None)):
        _compare(lambda lib: lib.asarray(obj, dtype=dtype and getattr(lib, dtype)))


def test_empty_strided_like_pytorch():
    for size, stride in (((2, 3), (1, 2)), ((2, 3), (3, 1)), ((0, 2), (2, 1)), ((4,), (2,))):
        e, t = ember.empty_strided(size, stride), torch.empty_strided(size, stride)
        assert tuple(e.shape) == tuple(t.shape) and e.stride() == t.stride()
        e.fill_(1.5)
        assert (e == 1.5).all()


def test_frombuffer_like_pytorch():
    for lib in (ember, torch):
        b = bytearray(b"\x01\x00\x00\x00\x02\x00\x00\x00")
        t = lib.frombuffer(b, dtype=lib.int32)
        assert t.tolist() == [1, 2] and t.dtype == lib.int32
        t[0] = 9
        assert b[0] == 9  # shares the buffer
        assert lib.frombuffer(b, dtype=lib.int32, count=1, offset=4).tolist() == [2]
    for args in ((b"abc",), (b"",), (b"abcdefgh", 1, 4), (b"abcd", 2, 0)):
        def call(lib):
            data, *rest = args
            count, offset = rest or (-1, 0)
            return lib.frombuffer(data, dtype=lib.int32, count=count, offset=offset)
        (_, e_err), (_, t_err) = _outcome(call, ember), _outcome(call, torch)
        assert e_err == t_err


# --------------------------------------------------------------------------- complex, polar

PAIRS = [("float32", "float32"), ("float64", "float64"), ("float32", "float64"),
         ("int64", "int64"), ("float32", "int64")]


@pytest.mark.parametrize("name", ["complex", "polar"])
@pytest.mark.parametrize("dtypes", PAIRS)
def test_complex_and_polar_like_pytorch(name, dtypes):
    a, b = [[0.5, -1.5, 2.0]], [[1.0], [-0.25]]
    _compare(lambda lib: getattr(lib, name)(lib.tensor(a, dtype=getattr(lib, dtypes[0])),
                                            lib.tensor(b, dtype=getattr(lib, dtypes[1]))))


@pytest.mark.parametrize("name", ["complex", "polar"])
def test_complex_and_polar_refuse_numbers_like_pytorch(name):
    _compare(lambda lib: getattr(lib, name)(lib.ones(2), 1.0))


@pytest.mark.parametrize("name", ["complex", "polar"])
def test_complex_and_polar_gradients_like_pytorch(name):
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.2, 2, (2, 3)), rng.uniform(-2, 2, (3,))
    v = rng.uniform(-1, 1, (2, 3)) + 1j * rng.uniform(-1, 1, (2, 3))
    grads = {}
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        y = lib.tensor(b, requires_grad=True)
        z = getattr(lib, name)(x, y)
        assert type(z.grad_fn).__name__ == name.capitalize() + "Backward0"
        z.backward(lib.tensor(v))
        grads[lib] = (x.grad.numpy(), y.grad.numpy())
    for e, t in zip(grads[ember], grads[torch]):
        np.testing.assert_allclose(e, t, rtol=1e-12)
    x = ember.tensor(a, requires_grad=True)
    y = ember.tensor(b, requires_grad=True)
    w = ember.tensor(v)

    def parts(x, y):  # a real function of the complex result: real and imaginary parts both
        z = getattr(ember, name)(x, y) * w
        return ember.stack([z.real, z.imag])
    assert gradcheck(parts, (x, y))
    assert gradgradcheck(parts, (x, y))


# --------------------------------------------------------------------------- dtype helpers


@pytest.mark.parametrize("src,dst", list(itertools.product(DTYPES, DTYPES)))
def test_can_cast_like_pytorch(src, dst):
    assert ember.can_cast(getattr(ember, src), getattr(ember, dst)) == \
        torch.can_cast(getattr(torch, src), getattr(torch, dst))


@pytest.mark.parametrize("dtype", DTYPES + [None, 1])
def test_finfo_and_iinfo_like_pytorch(dtype):
    for kind in ("finfo", "iinfo"):
        def info(lib):
            args = () if dtype is None else (getattr(lib, dtype) if isinstance(dtype, str)
                                             else dtype,)
            if kind == "iinfo" and not args:
                args = (lib.int32,)
            return getattr(lib, kind)(*args)
        (e, e_err), (t, t_err) = _outcome(info, ember), _outcome(info, torch)
        assert e_err == t_err
        if t_err is None:
            assert repr(e) == repr(t)
            for attr in ("bits", "min", "max", "eps", "tiny", "smallest_normal", "resolution",
                         "dtype"):
                assert getattr(e, attr, None) == getattr(t, attr, None)


CALLS = {
    "is_complex": [lambda lib: lib.ones(2, dtype=lib.complex64), lambda lib: lib.ones(2),
                   lambda lib: 1],
    "is_nonzero": [lambda lib: lib.tensor([1.0]), lambda lib: lib.tensor(0),
                   lambda lib: lib.tensor([]), lambda lib: lib.tensor([1, 2]), lambda lib: 1],
    "is_signed": [lambda lib: lib.ones(1, dtype=lib.uint8), lambda lib: lib.ones(1)],
    "is_storage": [lambda lib: lib.ones(1), lambda lib: 1],
    "is_conj": [lambda lib: lib.ones(1, dtype=lib.complex64).conj(), lambda lib: lib.ones(1)],
    "is_neg": [lambda lib: lib.ones(1)],
    "is_inference": [lambda lib: lib.ones(1)],
    "get_device": [lambda lib: lib.ones(1)],
    "numel": [lambda lib: lib.ones(2, 3), lambda lib: [1]],
    "is_floating_point": [lambda lib: lib.ones(1), lambda lib: lib.ones(1, dtype=lib.int64),
                          lambda lib: [1]],
    "typename": [lambda lib: lib.ones(2), lambda lib: lib.ones(2, dtype=lib.int64),
                 lambda lib: 1, lambda lib: int, lambda lib: [1]],
}


@pytest.mark.parametrize("name,k", [(n, k) for n, calls in CALLS.items()
                                    for k in range(len(calls))])
def test_tensor_kind_helpers_like_pytorch(name, k):
    (e, e_err), (t, t_err) = (_outcome(lambda lib: getattr(lib, name)(CALLS[name][k](lib)), lib)
                              for lib in (ember, torch))
    assert e_err == t_err and e == t


@pytest.mark.parametrize("args", [("float32", "int64"), ("uint8", "int8"), (1, "float32"),
                                  ("float32", "a")])
def test_promote_types_like_pytorch(args):
    def call(lib):
        return lib.promote_types(*(getattr(lib, a) if a in DTYPES else a for a in args))
    (e, e_err), (t, t_err) = _outcome(call, ember), _outcome(call, torch)
    assert e_err == t_err and str(e) == str(t)


def test_is_same_size_like_pytorch():
    for lib in (ember, torch):
        assert lib.is_same_size(lib.ones(2, 3), lib.zeros(2, 3))
        assert not lib.is_same_size(lib.ones(2, 3), lib.zeros(3, 2))


def test_constants_like_pytorch():
    for name in ("pi", "e", "inf", "nan", "newaxis"):
        e, t = getattr(ember, name), getattr(torch, name)
        assert e is t or e == t or (math.isnan(e) and math.isnan(t))


def test_set_default_tensor_type_like_pytorch():
    try:
        for lib in (ember, torch):
            with pytest.warns(UserWarning, match=r"^torch.set_default_tensor_type\(\) is "
                                                 "deprecated as of PyTorch 2.1"):
                lib.set_default_tensor_type(lib.DoubleTensor)
            assert lib.get_default_dtype() == lib.float64 and lib.ones(1).dtype == lib.float64
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lib.set_default_tensor_type("torch.FloatTensor")
                assert lib.get_default_dtype() == lib.float32
                with pytest.raises(TypeError, match="^only floating-point types are supported "
                                                    "as the default type$"):
                    lib.set_default_tensor_type(lib.LongTensor)
    finally:
        ember.set_default_dtype(ember.float32)
        torch.set_default_dtype(torch.float32)


# the creation and dtype helpers of PyTorch's namespace: each one ember has, or is listed here
# with why not (a new helper in torch's namespace makes this fail until it is sorted)
NOT_IN_EMBER = {
    # sparse, quantized, nested layouts and their dtypes: not in ember
    "sparse_coo_tensor", "sparse_csr_tensor", "sparse_csc_tensor", "sparse_bsr_tensor",
    "sparse_bsc_tensor", "sparse_compressed_tensor", "empty_quantized", "nested_tensor",
    "quantize_per_tensor", "quantize_per_channel", "quantize_per_tensor_dynamic",
    # memory layouts ember does not have (NumPy strides only)
    "empty_permuted",
    # DLPack and file-backed storage
    "from_dlpack", "from_file",
    # torch.fft's helpers live in torch.fft
    "fft_fftfreq", "fft_rfftfreq",
}


def test_pytorch_creation_and_dtype_helpers_exist():
    from torch.utils._device import _device_constructors
    names = {f.__name__ for f in _device_constructors()} | {
        "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like",
        "randint_like", "from_numpy", "frombuffer", "complex", "polar", "can_cast",
        "promote_types", "result_type", "finfo", "iinfo", "is_tensor", "is_storage",
        "is_complex", "is_floating_point", "is_nonzero", "is_signed", "is_same_size",
        "is_conj", "is_neg", "is_inference", "numel", "typename", "get_default_dtype",
        "set_default_dtype", "set_default_tensor_type", "get_default_device",
        "set_default_device", "set_printoptions", "is_inference_mode_enabled",
        "is_grad_enabled", "get_device", "chunk"}
    missing = sorted(n for n in names - NOT_IN_EMBER if not hasattr(ember, n))
    assert missing == []


@pytest.mark.parametrize("data", [[1, 2, 3], [1, 2.5], [True, False], [True, 2], [1, 2j],
                                  [1.5, True], [[1, 2], [3, 4.5]], [[True], [1]], [],
                                  (1, 2.0), [0] * 1000 + [0.5], [[1, 2], (3, 4)]])
def test_tensor_of_python_numbers_infers_dtype_as_pytorch(torch, data):
    """Rows of Python numbers take a short path (no per-element walk): dtype and values as
    PyTorch infers them."""
    e, t = ember.tensor(data), torch.tensor(data)
    assert str(e.dtype) == str(t.dtype)
    assert e.tolist() == t.tolist()


def test_tensor_of_numbers_and_tensors_as_pytorch(torch):
    e = ember.tensor([[ember.tensor(1.5), 2], [3, 4]])
    t = torch.tensor([[torch.tensor(1.5), 2], [3, 4]])
    assert str(e.dtype) == str(t.dtype) and e.tolist() == t.tolist()
