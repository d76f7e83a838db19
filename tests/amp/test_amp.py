"""torch.autocast and GradScaler against PyTorch: dtypes and values of ops under CPU autocast,
the state functions, the deprecated torch.cuda.amp / torch.cpu.amp spellings and their
warnings, and GradScaler step by step (CPU enabled; CUDA disabled without a GPU)."""
import pickle
import warnings

import numpy as np
import pytest

import ember

pytest.importorskip("ml_dtypes")


def _under_autocast(T, **kw):
    """Results of ops in a CPU autocast region (and around it), for either library."""
    rng = np.random.default_rng(0)

    def f(*shape):
        return T.tensor(rng.standard_normal(shape).astype(np.float32))
    a, b, v = f(8, 16), f(16, 5), f(16)
    w, bias = f(5, 16).requires_grad_(), f(5).requires_grad_()
    x4, k, kt = f(2, 3, 8, 8), f(4, 3, 3, 3), f(3, 4, 3, 3)
    y = T.tensor(rng.integers(0, 5, 8))
    F = T.nn.functional
    out = {}
    with T.autocast("cpu", **kw):
        out["mm"] = T.mm(a, b)
        out["matmul"] = a @ b
        out["matmul_vector"] = a @ v
        out["dot_by_matmul"] = v @ v
        out["bmm"] = T.bmm(f(2, 3, 4), f(2, 4, 5))
        out["addmm"] = T.addmm(f(8, 5), a, b)
        out["linear"] = F.linear(a, w, bias)
        out["linear_3d"] = F.linear(f(2, 8, 16), w, bias)
        out["conv1d"] = F.conv1d(f(2, 3, 10), f(4, 3, 3))
        out["conv2d"] = F.conv2d(x4, k, padding=1)
        out["conv_transpose2d"] = F.conv_transpose2d(x4, kt)
        out["einsum"] = T.einsum("ij,jk->ik", a, b)
        out["einsum_three"] = T.einsum("bi,oij,bj->bo", f(2, 3), f(5, 3, 4), f(2, 4))
        out["mm_mixed_dtypes"] = T.mm(a.bfloat16(), b)  # (cast before the dtype check)
        out["bmm_mixed_dtypes"] = T.bmm(f(2, 3, 4).bfloat16(), f(2, 4, 5))
        out["add_number"] = out["mm"] + 1.0
        out["add_float32"] = out["mm"] + T.ones(5)
        out["softmax"] = out["mm"].softmax(-1)
        out["layer_norm"] = F.layer_norm(out["linear"], (5,))
        out["relu"] = T.relu(out["linear"])
        out["cross_entropy"] = F.cross_entropy(out["linear"], y)
        out["mse_loss"] = F.mse_loss(out["mm"], T.zeros(8, 5))
        out["l1_loss"] = F.l1_loss(out["mm"], T.zeros(8, 5))
        out["nll_loss"] = F.nll_loss(out["mm"].log_softmax(-1), y)
        out["cat_promotes"] = T.cat([out["mm"], a[:, :5]])
        out["stack_promotes"] = T.stack([out["mm"], a[:, :5]])
        out["prod"] = out["mm"][0].prod()
        out["index_copy_promotes"] = T.index_copy(f(3, 5), 0, T.tensor([1]), out["mm"][:1])
        out["linalg_inv"] = T.linalg.inv((T.eye(4) * 4).bfloat16())  # (cast before its check)
        out["linalg_solve"] = T.linalg.solve((T.eye(4) * 2).bfloat16(), f(4))
        out["prelu"] = T.prelu(a, T.tensor([0.25]))
        cube = f(1, 2, 4, 4, 4).bfloat16()
        out["max_pool3d"] = F.max_pool3d(cube, 2)
        out["max_pool3d_indices"] = F.max_pool3d(cube, 2, return_indices=True)[0]
        out["float64_stays"] = T.mm(a.double(), b.double())
        out["int_stays"] = T.mm(T.ones(2, 2, dtype=T.int64), T.ones(2, 2, dtype=T.int64))
        out["addmm_in_place"] = f(8, 5).addmm_(a, b)  # (in-place ops are not autocast)
        with T.autocast("cpu", enabled=False):
            out["disabled_inside"] = T.mm(a, b)
        loss = out["linear"].float().pow(2).sum()
    out["after"] = T.mm(a, b)
    loss.backward()
    out["weight_grad"], out["bias_grad"] = w.grad, bias.grad
    return out


@pytest.mark.parametrize("kw", [{}, {"dtype": "float16"}, {"cache_enabled": False}],
                         ids=["bfloat16", "float16", "no_cache"])
def test_ops_under_cpu_autocast_match_pytorch(torch, kw):
    kw_t = {k: getattr(torch, v) if k == "dtype" else v for k, v in kw.items()}
    kw_e = {k: getattr(ember, v) if k == "dtype" else v for k, v in kw.items()}
    expected, got = _under_autocast(torch, **kw_t), _under_autocast(ember, **kw_e)
    assert set(expected) == set(got)
    for name in expected:
        r, e = expected[name], got[name]
        assert repr(e.dtype) == repr(r.dtype), name
        if name == "addmm" and e.dtype is ember.float16:
            # PyTorch's float16 GEMM rounds its product before adding the bias: one element
            # in 40 differs in the last bit from ember's single rounding.
            np.testing.assert_allclose(e.detach().float().numpy(), r.detach().float().numpy(),
                                       rtol=2e-3, err_msg=name)
        elif name in FLOAT32_RESULTS:  # float32 arithmetic: ember's and PyTorch's log, exp, sums
            want = r.detach().numpy()  # (addmm_: MKL adds the input inside its GEMM)
            np.testing.assert_allclose(e.detach().numpy(), want, rtol=1e-6,
                                       atol=1e-6 * float(np.abs(want).max()), err_msg=name)
        elif name in ISA_DEPENDENT:  # within one unit in the last place of the result's dtype
            want = r.detach().float().numpy()
            ulp = float(np.finfo(np.float16).eps if e.dtype is ember.float16 else 2.0 ** -7)
            np.testing.assert_allclose(e.detach().float().numpy(), want, rtol=ulp,
                                       atol=ulp * float(np.abs(want).max()), err_msg=name)
        else:
            np.testing.assert_array_equal(e.detach().float().numpy(),
                                          r.detach().float().numpy(), err_msg=name)


FLOAT32_RESULTS = ("cross_entropy", "nll_loss", "mse_loss", "l1_loss", "addmm_in_place",
                   "disabled_inside", "after", "float64_stays")  # (and GEMMs: MKL's, OpenBLAS's)
# PyTorch's half-precision transposed convolution (oneDNN) accumulates as the CPU's
# instructions allow: exact on one machine, a unit in the last place apart on another (AVX-512
# with bfloat16 instructions)
ISA_DEPENDENT = ("conv_transpose2d",)


def test_weight_cast_is_cached_within_a_region(torch):
    for lib in (torch, ember):
        w = lib.ones(3, 3, requires_grad=True)
        x = lib.ones(2, 3)
        with lib.autocast("cpu"):
            y1, y2 = lib.nn.functional.linear(x, w), lib.nn.functional.linear(x, w)
        # both products read one cast of w: one ToCopyBackward0 node (under their TBackward0)
        casts = [y.grad_fn.next_functions[1][0].next_functions[0][0] for y in (y1, y2)]
        assert type(casts[0]).__name__ == "ToCopyBackward0"
        assert casts[0] is casts[1], lib.__name__
        with lib.autocast("cpu", cache_enabled=False):
            y1, y2 = lib.nn.functional.linear(x, w), lib.nn.functional.linear(x, w)
        casts = [y.grad_fn.next_functions[1][0].next_functions[0][0] for y in (y1, y2)]
        assert casts[0] is not casts[1], lib.__name__


def test_decorator_and_state_functions(torch):
    for lib in (torch, ember):
        @lib.autocast("cpu")
        def product(a, b):
            assert lib.is_autocast_enabled("cpu") and not lib.is_autocast_enabled()
            return a @ b
        assert product(lib.ones(2, 2), lib.ones(2, 2)).dtype is lib.bfloat16
        assert not lib.is_autocast_enabled("cpu")
        assert lib.get_autocast_dtype("cpu") is lib.bfloat16
        assert lib.get_autocast_dtype("cuda") is lib.float16
        assert lib.is_autocast_cache_enabled()
        assert lib.amp.is_autocast_available("cpu") and lib.amp.is_autocast_available("cuda")
        assert lib.autocast is lib.amp.autocast
        with lib.autocast("cpu", dtype=lib.float16):
            assert lib.get_autocast_dtype("cpu") is lib.float16
        assert lib.get_autocast_dtype("cpu") is lib.bfloat16
        with pytest.raises(TypeError, match=r"autocast\(\)\(func\) requires a callable, but "
                                            r"got int"):
            lib.autocast("cpu")(3)


def _warnings_of(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("call", [
    lambda m: m.autocast("cuda"),
    lambda m: m.autocast("cpu", dtype=m.float32),
    lambda m: m.autocast("cpu", dtype=m.float64),
    lambda m: m.cuda.amp.autocast(),
    lambda m: m.cpu.amp.autocast(),
    lambda m: m.cuda.amp.GradScaler(),
    lambda m: m.cpu.amp.GradScaler(),
    lambda m: m.amp.GradScaler("cuda"),
    lambda m: m.amp.GradScaler(),
    lambda m: m.get_autocast_cpu_dtype(),
    lambda m: m.is_autocast_cpu_enabled(),
], ids=["cuda_disabled", "cpu_float32", "cpu_float64", "cuda_amp_autocast",
        "cpu_amp_autocast", "cuda_amp_scaler", "cpu_amp_scaler", "amp_scaler_cuda",
        "amp_scaler_default", "cpu_dtype", "cpu_enabled"])
def test_warnings_match_pytorch(torch, call):
    if torch.cuda.is_available():
        pytest.skip("PyTorch sees a GPU")

    def strip(ws):  # (PyTorch's C++ warnings name their source line; the text before is ours)
        return [(c, m.split(" (Triggered internally")[0]) for c, m in ws]
    r, expected = _warnings_of(lambda: call(torch))
    e, got = _warnings_of(lambda: call(ember))
    assert strip(got) == strip(expected)
    if hasattr(r, "_enabled"):
        assert e._enabled == r._enabled


def test_disabled_regions_change_nothing(torch):
    for lib in (torch, ember):
        a = lib.ones(2, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autocast("cuda"):
                assert (a @ a).dtype is lib.float32
            with lib.autocast("cpu", dtype=lib.float32):
                assert (a @ a).dtype is lib.float32
                assert not lib.is_autocast_enabled("cpu")


def test_argument_errors_match_pytorch(torch):
    for call, kind in [(lambda m: m.autocast(3), ValueError),
                       (lambda m: m.get_autocast_dtype("foo"), RuntimeError),
                       (lambda m: m.amp.custom_fwd(lambda ctx, x: x), TypeError)]:
        with pytest.raises(kind) as expected:
            call(torch)
        with pytest.raises(kind) as got:
            call(ember)
        assert str(got.value) == str(expected.value)


def test_custom_fwd_casts_inputs_and_runs_without_autocast(torch):
    for lib in (torch, ember):
        class Square(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type="cpu", cast_inputs=lib.float32)
            def forward(ctx, x):
                ctx.save_for_backward(x)
                assert not lib.is_autocast_enabled("cpu")
                return x @ x

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g @ x.T + x.T @ g
        x = lib.ones(2, 2, dtype=lib.bfloat16, requires_grad=True)
        with lib.autocast("cpu"):
            y = Square.apply(x)
        assert y.dtype is lib.float32
        y.sum().backward()
        assert x.grad.dtype is lib.bfloat16


# ------------------------------------------------------------------ GradScaler


def _scaler_run(T, grads, **kw):
    """A scaler and SGD driven through explicit gradients (inf/NaN ones too); the scaler's
    state, the parameters and what step() returned after each iteration."""
    scaler = T.amp.GradScaler("cpu", **kw)
    w = T.nn.Parameter(T.tensor([1.0, -2.0, 3.0]))
    opt = T.optim.SGD([w], lr=0.1, momentum=0.5)
    trace = []
    for k, g in enumerate(grads):
        loss = (w * T.tensor(g, dtype=T.float32)).sum()
        scaled = scaler.scale(loss)
        scaled.backward()
        if k % 2:
            scaler.unscale_(opt)
        result = scaler.step(opt)
        scaler.update()
        trace.append((scaled.item(), result, scaler.get_scale(), scaler._get_growth_tracker(),
                      scaler.state_dict(), w.detach().numpy().copy()))
        opt.zero_grad()
    return scaler, trace


GRADS = [[1.0, 2.0, 3.0], [0.5, 0.5, 0.5], [float("inf"), 1.0, 1.0], [1.0, 1.0, 1.0],
         [1.0, 1.0, 1.0], [float("nan"), 0.0, 0.0], [1e-3, 2e-3, 3e-3], [2.0, 2.0, 2.0],
         [1e38, 1e38, 1.0], [1.0, 1.0, 1.0]]


@pytest.mark.parametrize("kw", [{}, {"init_scale": 4.0, "growth_interval": 2},
                                {"init_scale": 3.0e38, "growth_interval": 1,
                                 "growth_factor": 4.0, "backoff_factor": 0.25}])
def test_cpu_grad_scaler_matches_pytorch_step_by_step(torch, kw):
    (_, expected), (_, got) = _scaler_run(torch, GRADS, **kw), _scaler_run(ember, GRADS, **kw)
    for k, (r, e) in enumerate(zip(expected, got)):
        # The scaler's state exactly; the parameters, and so the scaled loss, within a float32
        # rounding: PyTorch's SGD fuses its multiply-adds, ember's round twice, with or
        # without a scaler.
        np.testing.assert_equal(e[1:5], r[1:5], err_msg=str(k))
        np.testing.assert_allclose([e[0], *e[5]], [r[0], *r[5]], rtol=1e-6, err_msg=str(k))


def test_grad_scaler_state_dict_and_pickle(torch):
    for lib in (torch, ember):
        scaler, _ = _scaler_run(lib, GRADS[:3], init_scale=8.0, growth_interval=2)
        state = scaler.state_dict()
        other = lib.amp.GradScaler("cpu")
        other.load_state_dict(state)
        assert other.state_dict() == state
        assert pickle.loads(pickle.dumps(scaler)).state_dict() == state
        if lib is torch:
            expected = state
    assert state == expected


def test_grad_scaler_errors_match_pytorch(torch):
    def calls(T):
        w = T.nn.Parameter(T.ones(2))
        opt = T.optim.SGD([w], lr=0.1)
        fresh = T.amp.GradScaler("cpu")
        used = T.amp.GradScaler("cpu")
        used.scale(w.sum()).backward()
        half = T.nn.Parameter(T.ones(2, dtype=T.float16))
        half.grad = T.ones(2, dtype=T.float16)
        return [
            (lambda: fresh.update(), AssertionError),
            (lambda: fresh.step(opt), AssertionError),
            (lambda: fresh.unscale_(opt), AssertionError),
            (lambda: T.amp.GradScaler("cpu", growth_factor=1.0), AssertionError),
            (lambda: T.amp.GradScaler("cpu", backoff_factor=1.0), AssertionError),
            (lambda: fresh.load_state_dict({}), RuntimeError),
            (lambda: used.scale(3.0), ValueError),
            (lambda: used.step(opt, closure=lambda: 0), RuntimeError),
            (lambda: used.unscale_(T.optim.SGD([half], lr=0.1)), ValueError),
            (lambda: (used.unscale_(opt), used.unscale_(opt)), RuntimeError),
            (lambda: (used.step(opt), used.step(opt)), RuntimeError),
            (lambda: used.unscale_(opt), RuntimeError),
            (lambda: (used.update(), used.update()), AssertionError),
        ]
    for (rc, rk), (ec, ek) in zip(calls(torch), calls(ember)):
        with pytest.raises(rk) as expected:
            rc()
        with pytest.raises(ek) as got:
            ec()
        assert (type(got.value), str(got.value)) == (type(expected.value), str(expected.value))


def test_disabled_scaler_passes_through(torch):
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scaler = lib.amp.GradScaler("cuda")
        w = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([w], lr=0.5)
        loss = w.sum() * 3
        assert scaler.scale(loss) is loss
        loss.backward()
        assert scaler.step(opt) is None
        scaler.update()
        scaler.unscale_(opt)
        assert w.tolist() == [-0.5, -0.5]
        assert (scaler.is_enabled(), scaler.get_scale(), scaler.state_dict(),
                scaler._get_growth_tracker()) == (False, 1.0, {}, 0)
        with pytest.raises(AttributeError):
            scaler.get_growth_factor()


def test_bilinear_under_autocast_is_float32_as_pytorch(torch):
    """PyTorch's bilinear is one kernel on no autocast list; ember composes it from einsum and
    runs it with autocast off: the dtype is PyTorch's, the values float32's (PyTorch's kernel
    rounds its inner products to bfloat16)."""
    rng = np.random.default_rng(0)
    x1, x2, w = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3), (2, 4), (5, 3, 4)))
    results = []
    for lib in (torch, ember):
        with lib.autocast("cpu"):
            results.append(lib.nn.functional.bilinear(lib.tensor(x1), lib.tensor(x2),
                                                      lib.tensor(w)))
    (r, e), exact = results, ember.nn.functional.bilinear(ember.tensor(x1), ember.tensor(x2),
                                                          ember.tensor(w))
    assert repr(e.dtype) == repr(r.dtype) == "torch.float32"
    np.testing.assert_array_equal(e.numpy(), exact.numpy())
    np.testing.assert_allclose(e.numpy(), r.numpy(), atol=0.05)


def test_every_listed_op_ember_defines_is_declared():
    """A public function named as an op on PyTorch's CPU autocast lists casts at its entry
    (``@autocast_op``) or is itself a registry op carrying the policy: a wrapper's checks
    must see the cast tensors."""
    import importlib

    from ember.ops import autocast as dispatch
    from ember.ops.registry import Op
    modules = [importlib.import_module(f"ember.ops.{m}") for m in (
        "arithmetic", "indexing", "linalg", "nn.activation", "nn.conv", "nn.loss",
        "nn.normalization", "nn.pooling", "nn.resampling", "nn.sparse", "pointwise",
        "reduction", "shape", "sorting", "unary")] + [ember.nn.functional]
    undeclared = []
    for name, policy in dispatch.CPU_POLICY.items():
        for mod in modules:
            fn = mod.__dict__.get(name)
            if fn is None or not callable(fn):
                continue
            if name == "max_pool3d" and mod is ember.nn.functional:
                fn = mod.pooling._max_pool3d  # (only without indices: see its docstring)
            if isinstance(fn, Op):
                ok = fn.autocast == policy
            else:
                ok = getattr(fn, "__wrapped__", None) is not None and \
                    fn.__code__ is dispatch.autocast_op(name)(lambda: 0).__code__
            if not ok:
                undeclared.append(f"{mod.__name__}.{name}")
    assert not undeclared
