"""``ember.fft`` against PyTorch's ``torch.fft``: values and dtypes over shapes, dims, lengths
and normalisations, the errors (types and words), frequencies and shifts, and gradients of
complex leaves. The ops' derivatives by finite differences are in ``ops/test_ops_fft.py``."""
import numpy as np
import pytest

import ember

from .oracle import assert_same_tensor, outcome, raised

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2", "fftn", "ifftn", "rfftn",
       "irfftn", "hfftn", "ihfftn"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"}
NORMS = [None, "backward", "ortho", "forward"]


def _data(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if dtype in ("complex64", "complex128"):
        x = x + 1j * rng.standard_normal(shape)
    if dtype in ("int64", "bool"):
        x = (x * 3).round()
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int64",
                                   "bool"])
@pytest.mark.parametrize("name", ONE_D)
def test_one_dim_transforms(torch, name, dtype):
    if name in REAL_ONLY and dtype.startswith("complex"):
        return
    tol = 1e-10 if dtype in ("float64", "complex128") else 1e-4
    x = _data(dtype, (3, 6))
    for kwargs in [{}, {"n": 5}, {"n": 8}, {"n": 1}, {"dim": 0}, {"dim": 0, "n": 4}]:
        for norm in NORMS:
            e = getattr(ember.fft, name)(ember.tensor(x), norm=norm, **kwargs)
            t = getattr(torch.fft, name)(torch.tensor(x), norm=norm, **kwargs)
            assert_same_tensor(e, t, rtol=tol, atol=tol, conj=True)


@pytest.mark.slow
@pytest.mark.parametrize("name", N_D)
def test_n_dim_transforms(torch, name):
    for dtype in ["float32", "complex128"]:
        if name in REAL_ONLY and dtype == "complex128":
            continue
        x = _data(dtype, (2, 3, 4))
        tol = 1e-4 if dtype == "float32" else 1e-10
        cases = [{}, {"s": (3, 5)}, {"s": (-1, 7)}, {"dim": (0, 2)}, {"dim": (2, 0), "s": (3, 2)},
                 {"dim": (-1,)}]
        if not name.endswith("2"):
            cases += [{"s": (2, 2, 6)}, {"dim": None}]
        for kwargs in cases:
            for norm in NORMS:
                e = getattr(ember.fft, name)(ember.tensor(x), norm=norm, **kwargs)
                t = getattr(torch.fft, name)(torch.tensor(x), norm=norm, **kwargs)
                assert_same_tensor(e, t, rtol=tol, atol=tol, conj=True)


ERRORS = {
    "norm": lambda L: L.fft.fft(L.ones(4), norm="bad"),
    "n_zero": lambda L: L.fft.fft(L.ones(4), n=0),
    "n_negative": lambda L: L.fft.rfft(L.ones(4), n=-1),
    "dim_range": lambda L: L.fft.fft(L.ones(4), dim=1),
    "scalar": lambda L: L.fft.fft(L.tensor(1.0)),
    "empty": lambda L: L.fft.fft(L.ones(0)),
    "irfft_one_bin": lambda L: L.fft.irfft(L.ones(1)),
    "irfft_empty": lambda L: L.fft.irfft(L.ones(0)),
    "s_too_long": lambda L: L.fft.fftn(L.ones(4), s=(2, 2)),
    "dims_unique": lambda L: L.fft.fftn(L.ones(3, 4), dim=(0, 0)),
    "dims_unique_first": lambda L: L.fft.fftn(L.ones(3, 4), s=(2,), dim=(1, 1)),
    "dim_s_lengths": lambda L: L.fft.fftn(L.ones(3, 4), s=(2,), dim=(0, 1)),
    "s_zero": lambda L: L.fft.irfftn(L.ones(3, 4), s=(0, 4)),
    "rfftn_no_dims": lambda L: L.fft.rfftn(L.ones(3, 4), dim=()),
    "irfftn_no_dims": lambda L: L.fft.irfftn(L.ones(3, 4), dim=()),
    "rfft_complex": lambda L: L.fft.rfft(L.ones(4, dtype=L.complex64)),
    "ihfft_complex": lambda L: L.fft.ihfft(L.ones(4, dtype=L.complex128)),
    "half": lambda L: L.fft.fft(L.ones(4, dtype=L.float16)),
    "fft2_one_dim": lambda L: L.fft.fft2(L.ones(3)),
    "n_float": lambda L: L.fft.fft(L.ones(4), n=2.5),
    "dim_tuple": lambda L: L.fft.fft(L.ones(4), dim=(0,)),
    "fftfreq_int": lambda L: L.fft.fftfreq(4, dtype=L.int64),
    "shift_dim": lambda L: L.fft.fftshift(L.ones(3, 4), dim=5),
    "fftfreq_complex": lambda L: L.fft.fftfreq(4, dtype=L.complex64),
    "rfftn_complex": lambda L: L.fft.rfft2(L.ones(2, 2, dtype=L.complex64)),
    "ihfftn_complex": lambda L: L.fft.ihfftn(L.ones(2, 2, dtype=L.complex64)),
    "ihfftn_half": lambda L: L.fft.ihfftn(L.ones(2, 2, dtype=L.float16)),
    "out_real_for_complex": lambda L: L.fft.fft(L.ones(4), out=L.empty(4)),
    "out_complex_for_real": lambda L: L.fft.irfftn(L.ones(4, 4),
                                                   out=L.empty(0, dtype=L.complex64)),
    "out_exact_conjugate": lambda L: L.fft.ihfft(L.ones(4), out=L.empty(0, dtype=L.complex128)),
    "out_requires_grad": lambda L: L.fft.rfft(L.ones(4, requires_grad=True),
                                              out=L.empty(0, dtype=L.complex64)),
    "out_requires_grad_c2r": lambda L: L.fft.hfft(
        L.ones(4, dtype=L.complex64, requires_grad=True), out=L.empty(0)),
    "out_not_tensor": lambda L: L.fft.fft(L.ones(4), out=3),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_pytorch(torch, name):
    expected = raised(ERRORS[name], torch)
    assert expected is not None
    assert raised(ERRORS[name], ember) == expected


def test_frequencies_and_shifts(torch):
    for n in [1, 2, 5, 8]:
        for d in [1.0, 0.3, 2]:
            for dtype in ["float32", "float64"]:
                for fn in ["fftfreq", "rfftfreq"]:
                    e = getattr(ember.fft, fn)(n, d, dtype=getattr(ember, dtype))
                    t = getattr(torch.fft, fn)(n, d, dtype=getattr(torch, dtype))
                    assert repr(e) == repr(t)
                    assert np.array_equal(e.numpy(), t.numpy())
    assert repr(ember.fft.fftfreq(4, requires_grad=True)) == \
        repr(torch.fft.fftfreq(4, requires_grad=True))
    x = np.arange(30).reshape(5, 6)
    for dim in [None, 0, 1, -1, (0, 1), (1,)]:
        for fn in ["fftshift", "ifftshift"]:
            e = getattr(ember.fft, fn)(ember.tensor(x), dim=dim)
            t = getattr(torch.fft, fn)(torch.tensor(x), dim=dim)
            assert repr(e) == repr(t)


GRADS = {
    "fft": lambda L, z: L.fft.fft(z, n=7, norm="ortho"),
    "ifft": lambda L, z: L.fft.ifft(z, dim=0),
    "irfft_even": lambda L, z: L.fft.irfft(z, n=6),
    "irfft_odd": lambda L, z: L.fft.irfft(z, n=5, norm="forward"),
    "hfft": lambda L, z: L.fft.hfft(z),
    "fftn": lambda L, z: L.fft.fftn(z, s=(2, 6)),
    "irfft2": lambda L, z: L.fft.irfft2(z, s=(4, 3), norm="ortho"),
    "hfftn": lambda L, z: L.fft.hfftn(z, dim=(1, 0)),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_of_complex_leaves_as_pytorch(torch, name):
    """PyTorch's convention for complex leaves (the conjugate Wirtinger derivative), through
    a real loss of the transform (grad_fn names along the way as PyTorch's)."""
    z = _data("complex128", (3, 4), seed=1)
    w = _data("complex128", (8, 8), seed=2)
    grads = []
    for lib in (ember, torch):
        leaf = lib.tensor(z, requires_grad=True)
        out = GRADS[name](lib, leaf)
        weight = lib.tensor(w[:out.shape[0], :out.shape[1]])
        loss = (out * weight).abs().sum() if out.is_complex() else (out * weight.real).sum()
        loss.backward()
        grads.append((leaf.grad.resolve_conj().numpy(), type(out.grad_fn).__name__))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-10, atol=1e-12)
    assert grads[0][1] == grads[1][1]


def test_gradients_in_float32_keep_the_dtype(torch):
    x = _data("float32", (2, 5))
    for lib in (ember, torch):
        leaf = lib.tensor(x, requires_grad=True)
        lib.fft.irfft(lib.fft.rfft(leaf, n=8) * 2, n=7).sum().backward()
        assert str(leaf.grad.dtype) == "torch.float32"


def test_double_backward_and_forward_mode(torch):
    """Second derivatives through the transforms (the rules are transforms recorded again)
    and forward-mode tangents, against PyTorch."""
    x = _data("float64", (6,))
    v = _data("float64", (6,), seed=3)
    results = []
    for lib in (ember, torch):
        leaf = lib.tensor(x, requires_grad=True)
        y = lib.fft.irfft(lib.fft.rfft(leaf) ** 2, n=6)
        (g,) = lib.autograd.grad((y * y).sum(), leaf, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), leaf)
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(lib.tensor(x), lib.tensor(v))
            tangent = fw.unpack_dual(lib.fft.hfft(lib.fft.ihfft(dual) ** 2)).tangent
        results.append((g.detach().numpy(), h.numpy(), tangent.numpy()))
    for e, t in zip(*results):
        np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-10)


def test_submodule_import_path():
    import importlib
    assert importlib.import_module("ember.fft") is ember.fft


OUT_FUNCTIONS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2",
                 "irfft2", "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn",
                 "ihfftn"]


def _warning(w):
    """A warning's words, without the C++ location PyTorch appends to some."""
    return str(w.message).split(" (Triggered internally")[0]


def _out_results(L, name):
    """``name(..., out=...)`` over input and out dtypes, empty and wrongly sized outs: what
    comes back, or the error, and the warnings."""
    import warnings
    x = L.tensor(_data("float32", (4, 4)))
    rows = []
    for arg in ([4] if name.endswith("freq") else [x, x.to(L.complex64), x.double()]):
        for dtype in ["float32", "float64", "complex64", "complex128", "int64", "float16"]:
            for shape in [(0,), (3,)]:
                out = L.empty(shape, dtype=getattr(L, dtype))
                try:
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        r = getattr(L.fft, name)(arg, out=out)
                    rows.append((r is out, str(r.dtype), repr(r.resolve_conj()),
                                 [_warning(w) for w in caught]))
                except (RuntimeError, TypeError, NotImplementedError) as e:
                    rows.append((type(e).__name__, str(e)))
    return rows


@pytest.mark.parametrize("name", OUT_FUNCTIONS + ["fftfreq", "rfftfreq"])
def test_out_as_pytorch(torch, name):
    assert _out_results(ember, name) == _out_results(torch, name)


VMAPPED = {
    "rfft": lambda L: lambda v: L.fft.rfft(v, n=6),
    "irfft": lambda L: lambda v: L.fft.irfft(v.to(L.complex128), n=7, dim=0),
    "fft2": lambda L: lambda v: L.fft.fft2(v, norm="ortho"),
    "ihfftn": lambda L: L.fft.ihfftn,
    "ifft": lambda L: lambda v: L.fft.ifft(v, dim=0),
}


@pytest.mark.parametrize("name", sorted(VMAPPED))
def test_vmap_runs_the_transforms_on_the_whole_batch(torch, name):
    from ember.ops import batching
    x = _data("float64", (3, 4, 5))
    for in_dims in (0, 2):
        before = sum(n for op, n in batching.fallbacks.items() if op.startswith("fft"))
        e = ember.func.vmap(VMAPPED[name](ember), in_dims=in_dims)(ember.tensor(x))
        t = torch.func.vmap(VMAPPED[name](torch), in_dims=in_dims)(torch.tensor(x))
        # (ember's vmap results drop the conjugate bit)
        assert_same_tensor(e, t, rtol=1e-10, atol=1e-10)
        assert sum(n for op, n in batching.fallbacks.items() if op.startswith("fft")) == before


EDGES = {
    "fftfreq_empty": lambda L: L.fft.fftfreq(0),
    "fftfreq_negative": lambda L: L.fft.fftfreq(-1),
    "fftfreq_zero_spacing": lambda L: L.fft.fftfreq(4, 0.0),
    "fftfreq_negative_zero_spacing": lambda L: L.fft.fftfreq(3, -0.0),
    "rfftfreq_minus_one": lambda L: L.fft.rfftfreq(-1),
    "rfftfreq_minus_three": lambda L: L.fft.rfftfreq(-3),
    "rfftfreq_zero": lambda L: L.fft.rfftfreq(0),
    "shift_scalar": lambda L: L.fft.fftshift(L.tensor(1.0)),
    "shift_list": lambda L: L.fft.ifftshift(L.arange(6.0).reshape(2, 3), dim=[0]),
    "no_dims": lambda L: L.fft.fftn(L.ones(2, 2), dim=()),
    "no_dims_scalar": lambda L: L.fft.fftn(L.tensor(2.0)),
    "no_dims_grad_fn": lambda L: L.fft.ifftn(L.ones(2, requires_grad=True), dim=()).grad_fn.name(),
    "irfft_n_one": lambda L: L.fft.irfft(L.ones(3), n=1),
    "n_bool": lambda L: L.fft.fft(L.ones(3), n=True),
    "list_input": lambda L: L.fft.fft([1.0, 2.0]),
}


@pytest.mark.parametrize("name", sorted(EDGES))
def test_edge_cases_as_pytorch(torch, name):
    def run(lib):
        return repr(EDGES[name](lib))
    assert outcome(run, ember) == outcome(run, torch)


def test_autocast_runs_the_listed_transforms_in_float32(torch):
    """PyTorch's CPU autocast lists fft..irfftn, hfft and ihfft as float32 ops: a bfloat16
    input is transformed in float32; the unlisted ones (hfft2...) refuse it as outside."""
    x = _data("float32", (2, 6))
    for lib in (ember, torch):
        b = lib.tensor(x).to(lib.bfloat16)
        with lib.autocast("cpu"):
            got = [lib.fft.fft(b), lib.fft.irfft(b, n=5), lib.fft.rfftn(b), lib.fft.ihfft(b)]
            with pytest.raises(RuntimeError, match="^Unsupported dtype BFloat16$"):
                lib.fft.hfft2(b)
        if lib is ember:
            mine = got
    for e, t in zip(mine, got):
        assert_same_tensor(e, t, rtol=1e-5, atol=1e-5, conj=True)
