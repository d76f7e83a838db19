"""The modules scripts touch even on a CPU-only machine: ``torch.backends``, ``torch.cuda``
without a GPU, ``torch.onnx``, ``torch.hub``, ``torch.multiprocessing``. Each is compared with
PyTorch 2.13's CPU build: return values, exception types and messages, warnings."""
import sys
import warnings

import pytest

import ember

from . import oracle

no_gpu = pytest.mark.skipif(ember.cuda.is_available(), reason="compares with a CPU-only build")


def outcome(fn):
    """What calling ``fn`` did: ("ok", result) or (exception type name, message), plus the
    warnings it gave as (category name, message) pairs (without PyTorch's C++ suffix
    " (Triggered internally at ...)", which names its source files)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = oracle.outcome(fn)
    if not isinstance(result, oracle.Raised):
        result = ("ok", result)
    return result, [(w.category.__name__, str(w.message).split(" (Triggered internally")[0])
                    for w in caught]


def same(torch, code, **names):
    """Run ``code`` (an expression of ``T``, the library) on ember and PyTorch; compare."""
    got = outcome(lambda: eval(code, {"T": ember, **names}))
    want = outcome(lambda: eval(code, {"T": torch, **names}))
    assert got == want, code


# --------------------------------------------------------------------------- backends

FLAG_SETS = [
    ("T.backends.cudnn", "benchmark"), ("T.backends.cudnn", "deterministic"),
    ("T.backends.cudnn", "enabled"), ("T.backends.cudnn", "allow_tf32"),
    ("T.backends.cuda.matmul", "allow_tf32"),
    ("T.backends.cuda.matmul", "allow_fp16_reduced_precision_reduction"),
    ("T.backends.cuda.matmul", "allow_bf16_reduced_precision_reduction"),
    ("T.backends.mkldnn", "enabled"), ("T.backends.mkldnn", "deterministic"),
]


@pytest.mark.parametrize("where,flag", FLAG_SETS)
@pytest.mark.parametrize("value", [True, False, 1, "yes", None])
def test_backend_flags_keep_values_and_check_them_as_torch(torch, where, flag, value):
    for lib in (ember, torch):
        obj = eval(where, {"T": lib})
        before = getattr(obj, flag)
        try:
            got = outcome(lambda: setattr(obj, flag, value) or getattr(obj, flag))  # noqa: B023
            if lib is ember:
                mine = got
            else:
                assert mine == got
        finally:
            setattr(obj, flag, before)


def test_backend_defaults_match_torch(torch):
    for code in ["T.backends.cudnn.benchmark", "T.backends.cudnn.deterministic",
                 "T.backends.cudnn.enabled", "T.backends.cudnn.allow_tf32",
                 "T.backends.cudnn.version()", "T.backends.cudnn.is_available()",
                 "T.backends.cuda.matmul.allow_tf32", "T.backends.cuda.is_built()",
                 "T.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
                 "T.backends.cuda.flash_sdp_enabled()", "T.backends.cuda.math_sdp_enabled()",
                 "T.backends.cuda.mem_efficient_sdp_enabled()",
                 "T.backends.cuda.cudnn_sdp_enabled()",
                 "T.backends.cuda.is_flash_attention_available()",
                 "T.backends.mps.is_available()", "T.backends.mps.is_built()",
                 "T.backends.mkldnn.enabled", "T.backends.mkldnn.allow_tf32",
                 "T.backends.opt_einsum.is_available()", "T.backends.opt_einsum.enabled",
                 "T.backends.opt_einsum.strategy", "T.backends.cpu.get_cpu_capability()",
                 "T.get_float32_matmul_precision()", "T.backends.cuda.matmul.nope",
                 "setattr(T.backends.cuda.matmul, 'nope', 1)"]:
        same(torch, code)


def test_unknown_matmul_attribute_and_tuple_forms(torch):
    for lib in (ember, torch):
        mm = lib.backends.cuda.matmul
        with pytest.raises(AttributeError, match="^Unknown attribute foo$"):
            mm.foo  # noqa: B018
        mm.allow_fp16_reduced_precision_reduction = (False,)
        assert mm.allow_fp16_reduced_precision_reduction is False
        with pytest.raises(RuntimeError, match="allow_splitk=False is not supported"):
            mm.allow_fp16_reduced_precision_reduction = (True, False)
        mm.allow_fp16_reduced_precision_reduction = True


def test_tf32_and_float32_matmul_precision_are_one_setting(torch):
    for lib in (ember, torch):
        try:
            lib.backends.cuda.matmul.allow_tf32 = True
            assert lib.get_float32_matmul_precision() == "high"
            lib.set_float32_matmul_precision("medium")
            assert lib.backends.cuda.matmul.allow_tf32 is True
            lib.set_float32_matmul_precision("highest")
            assert lib.backends.cuda.matmul.allow_tf32 is False
        finally:
            lib.set_float32_matmul_precision("highest")
    same(torch, "T.set_float32_matmul_precision('foo')")


def test_cudnn_flags_context_sets_and_restores(torch):
    for lib in (ember, torch):
        cudnn = lib.backends.cudnn
        seen = []
        with cudnn.flags(enabled=False, benchmark=True, deterministic=True) as entered:
            seen.append((entered, cudnn.enabled, cudnn.benchmark, cudnn.deterministic))
        with pytest.raises(ValueError):
            with cudnn.flags():
                seen.append(cudnn.enabled)
                raise ValueError
        seen.append((cudnn.enabled, cudnn.benchmark, cudnn.deterministic))
        if lib is ember:
            mine = seen
    assert mine == seen


def test_sdp_switches_and_the_deprecated_sdp_kernel(torch):
    for lib in (ember, torch):
        bc = lib.backends.cuda
        with pytest.warns(FutureWarning, match=r"`torch.backends.cuda.sdp_kernel\(\)` is "
                                               "deprecated"):
            ctx = bc.sdp_kernel(enable_flash=False, enable_math=True)
        with ctx as entered:
            assert entered == {} and not bc.flash_sdp_enabled() and bc.math_sdp_enabled()
        assert bc.flash_sdp_enabled()
        bc.enable_mem_efficient_sdp(False)
        assert not bc.mem_efficient_sdp_enabled()
        bc.enable_mem_efficient_sdp(True)
    for name in ["enable_flash_sdp", "enable_math_sdp", "enable_mem_efficient_sdp",
                 "enable_cudnn_sdp"]:
        same(torch, f"T.backends.cuda.{name}(1)")


def test_backends_import_at_torchs_paths():
    import importlib
    for name in ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]:
        assert importlib.import_module(f"ember.backends.{name}") is getattr(ember.backends, name)


# --------------------------------------------------------------------------- cuda, no GPU

CUDA_CALLS = [
    "manual_seed(1)", "manual_seed_all(1)", "seed()", "seed_all()", "initial_seed()",
    "manual_seed('x')", "synchronize()", "synchronize(0)", "set_device(0)", "set_device(-1)",
    "set_device('cuda')", "set_device('cuda:1')", "set_device(None)",
    "set_device(T.device('cpu'))", "current_device()", "get_device_name()",
    "get_device_name(0)", "get_device_properties(0)", "get_device_capability()",
    "is_bf16_supported()", "empty_cache()", "memory_allocated()", "memory_allocated(0)",
    "memory_allocated('cuda:1')", "max_memory_allocated()", "memory_reserved()",
    "max_memory_reserved()", "reset_peak_memory_stats()", "reset_max_memory_allocated()",
    "device_count()", "is_available()", "is_initialized()", "current_stream()",
    "default_stream()", "get_rng_state()", "get_rng_state_all()",
    "set_rng_state(T.zeros(5, dtype=T.uint8))", "set_rng_state_all([])", "memory_stats()",
    "mem_get_info()", "init()", "get_arch_list()", "Event()", "Event(enable_timing=True)",
    "Stream()", "stream(None).__enter__()", "device('cpu')", "device(0).__enter__()",
    "device('cuda:0').__enter__()", "device(None).__enter__()", "device(-1).__enter__()",
    "device_of(T.ones(2)).__enter__()", "OutOfMemoryError.__mro__[1:]",
    "nvtx.range_push('a')", "nvtx.range_pop()", "nvtx.mark('a')", "nvtx.range('a').__enter__()",
    "memory_summary()", "ipc_collect()", "is_current_stream_capturing()",
    "set_per_process_memory_fraction(0.5)",
    "LongTensor([1])", "FloatTensor(2, 3)", "FloatTensor.__name__", "device('cuda').idx",
    "device('cuda').__enter__()", "device(T.device('cuda')).idx", "device(1).idx",
]


@no_gpu
@pytest.mark.parametrize("call", CUDA_CALLS)
def test_cuda_without_a_gpu_behaves_as_torch(torch, call):
    same(torch, "T.cuda." + call)


@no_gpu
def test_cuda_tensors_refused_without_a_gpu(torch):
    same(torch, "T.ones(2).cuda()")
    same(torch, "T.ones(2, device='cuda')")
    for name in ["FloatTensor", "DoubleTensor", "LongTensor", "ByteTensor", "BoolTensor"]:
        same(torch, f"isinstance(T.ones(2).to(T.cuda.{name}.dtype), T.cuda.{name})")
        same(torch, f"isinstance(T.ones(2).to(T.cuda.{name}.dtype), T.{name})")


@pytest.mark.skipif(not ember.cuda.is_available(), reason="needs CuPy and a GPU")
def test_cuda_with_a_gpu_through_cupy():
    import cupy
    cuda = ember.cuda
    assert cuda.device_count() == cupy.cuda.runtime.getDeviceCount()
    assert cuda.current_device() == cupy.cuda.runtime.getDevice()
    assert isinstance(cuda.get_device_name(), str) and len(cuda.get_device_capability()) == 2
    cuda.empty_cache()
    cuda.reset_peak_memory_stats()
    before = cuda.memory_allocated()
    x = ember.ones(1 << 20, device="cuda")
    assert cuda.memory_allocated() >= before + 4 * (1 << 20)
    assert cuda.max_memory_allocated() >= cuda.memory_allocated()
    del x
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    s = cuda.Stream()
    with cuda.stream(s):
        start.record()
        y = ember.ones(100, device="cuda") * 2
        end.record()
    s.synchronize()
    cuda.synchronize()
    assert end.query() and start.elapsed_time(end) >= 0 and y.sum().item() == 200
    cuda.manual_seed(3)
    assert cuda.initial_seed() == 3


# --------------------------------------------------------------------------- onnx

def test_onnx_export_refuses_clearly_and_is_in_onnx_export_is_false(torch):
    import ember.onnx  # noqa: F401  (the module path a script imports)
    same(torch, "T.onnx.is_in_onnx_export()")
    with pytest.raises(NotImplementedError, match="torch.onnx.export is not supported by "
                                                  "ember"):
        ember.onnx.export(ember.nn.Linear(2, 2), (ember.ones(2),), "model.onnx")


# --------------------------------------------------------------------------- hub

def test_hub_dirs_follow_torch(torch, tmp_path, monkeypatch):
    monkeypatch.delenv("TORCH_HOME", raising=False)
    same(torch, "T.hub.get_dir()")
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    same(torch, "T.hub.get_dir()")
    for lib in (ember, torch):
        lib.hub.set_dir(str(tmp_path / "h"))
        try:
            assert lib.hub.get_dir() == str(tmp_path / "h")
        finally:
            lib.hub._hub_dir = None


def test_hub_refuses_the_network_and_loads_local_repos(torch, tmp_path):
    for call in (lambda: ember.hub.load("pytorch/vision", "resnet18"),
                 lambda: ember.hub.list("pytorch/vision"),
                 lambda: ember.hub.help("pytorch/vision", "resnet18"),
                 lambda: ember.hub.download_url_to_file("https://x/y.pt", str(tmp_path / "y")),
                 lambda: ember.hub.load_state_dict_from_url("https://x/y.pt",
                                                            model_dir=str(tmp_path))):
        with pytest.raises(RuntimeError, match="does not access the network"):
            call()
    same(torch, "T.hub.load('a/b', 'x', source='foo')")
    (tmp_path / "hubconf.py").write_text(
        "import helper\n\ndef double(scale=2):\n    return lambda x: x * scale\n")
    (tmp_path / "helper.py").write_text("")  # hubconf's own modules import from its folder
    try:
        fn = ember.hub.load(str(tmp_path), "double", scale=3, source="local")
    finally:
        sys.modules.pop("helper", None)
    assert fn(ember.tensor([1.0])).tolist() == [3.0]
    with pytest.raises(RuntimeError, match="Cannot find callable nope in hubconf"):
        ember.hub.load(str(tmp_path), "nope", source="local")


def test_hub_loads_a_cached_checkpoint(tmp_path):
    ember.save({"w": ember.ones(2)}, str(tmp_path / "weights.pt"))
    sd = ember.hub.load_state_dict_from_url("https://example.com/a/weights.pt",
                                            model_dir=str(tmp_path))
    assert sd["w"].tolist() == [1.0, 1.0]


# --------------------------------------------------------------------------- multiprocessing

def test_multiprocessing_reexports_the_standard_api(torch):
    import multiprocessing

    import ember.multiprocessing as mp
    for name in ["Process", "Queue", "Pool", "get_context", "set_start_method", "cpu_count",
                 "get_start_method", "Lock", "Event", "Manager", "SimpleQueue", "Pipe"]:
        assert getattr(mp, name) == getattr(multiprocessing, name) == \
            getattr(torch.multiprocessing, name), name
    for name in ["spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
                 "ProcessExitedException", "get_sharing_strategy"]:
        assert hasattr(mp, name)
    same(torch, "T.multiprocessing.set_sharing_strategy('x')")
    same(torch, "(T.multiprocessing.get_sharing_strategy(), "
                "T.multiprocessing.get_all_sharing_strategies())")


def _child(i, path, fail_at):
    if i == fail_at:
        raise ValueError(f"boom {i}")
    with open(f"{path}/{i}", "w") as f:
        f.write(str(i * 10))


def test_spawn_runs_children_and_reports_their_errors(tmp_path):
    mp = ember.multiprocessing
    mp.spawn(_child, args=(str(tmp_path), -1), nprocs=2, start_method="fork")
    assert sorted(p.read_text() for p in tmp_path.iterdir()) == ["0", "10"]
    with pytest.raises(mp.ProcessRaisedException) as info:
        mp.spawn(_child, args=(str(tmp_path), 1), nprocs=2, start_method="fork")
    assert info.value.error_index == 1
    assert str(info.value).startswith("\n\n-- Process 1 terminated with the following "
                                      "error:\nTraceback (most recent call last):\n")
    assert str(info.value).endswith("ValueError: boom 1\n")
    ctx = mp.spawn(_child, args=(str(tmp_path), -1), nprocs=1, join=False,
                   start_method="fork")
    assert isinstance(ctx, mp.ProcessContext) and ctx.join() is True


def test_share_memory_is_seen_by_forked_processes(torch):
    import os
    for lib in (ember, torch):
        t = lib.ones(3)
        assert not t.is_shared()
        assert t.share_memory_() is t and t.is_shared() and t[1:].is_shared()
        assert t.share_memory_() is t
    pid = os.fork()
    if pid == 0:  # the child writes; the parent must see it
        t.mul_(5)
        os._exit(0)
    os.waitpid(pid, 0)
    t = ember.tensor([1.0, 2.0])
    t.share_memory_()
    pid = os.fork()
    if pid == 0:
        t.mul_(5)
        os._exit(0)
    os.waitpid(pid, 0)
    assert t.tolist() == [5.0, 10.0]
    m = ember.nn.Linear(2, 2)
    w = m.weight
    assert m.share_memory() is m and m.weight is w and w.is_shared() and m.bias.is_shared()
    with pytest.raises(RuntimeError, match="share_memory_\\(\\) of a view is not supported"):
        ember.ones(4)[1:].share_memory_()
