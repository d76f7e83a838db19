"""PyTorch's module paths under ember: every submodule of torch.nn, torch.autograd, torch.optim
and torch.utils that real code imports exists at the same path and exports PyTorch's names.

``PATHS`` lists, per submodule, the names ember has (each checked to exist in PyTorch's module
too); ``NOT_IN_EMBER`` lists the submodules ember does not have, with the reason. A sweep over
PyTorch's installed packages checks that every public submodule is in one list or the other,
so a submodule PyTorch adds shows up here.
"""
import contextlib
import importlib
import importlib.util
import io
import pkgutil
import re
import subprocess
import sys
import textwrap
import warnings

import pytest

import ember

PATHS = {
    "nn": ["Module", "Parameter", "Linear", "DataParallel", "functional", "init", "utils",
           "parallel", "modules"],
    "nn.common_types": ["_size_1_t", "_size_2_t", "_size_3_t", "_size_any_t", "_size_2_opt_t",
                        "_size_any_opt_t", "_ratio_2_t", "_ratio_any_t", "_tensor_list_t",
                        "_maybe_indices_t", "_scalar_or_tuple_2_t"],
    "nn.attention": ["SDPBackend", "sdpa_kernel"],
    "nn.functional": ["linear", "relu", "softmax", "cross_entropy", "conv2d", "pad", "grad"],
    "nn.grad": ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight",
                "conv3d_input", "conv3d_weight"],
    "nn.init": ["kaiming_uniform_", "xavier_uniform_", "zeros_", "calculate_gain",
                "_calculate_fan_in_and_fan_out", "_calculate_correct_fan", "uniform", "normal",
                "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
                "kaiming_uniform", "kaiming_normal", "orthogonal"],
    "nn.parameter": ["Parameter"],
    "nn.modules": ["Module", "Linear", "Conv2d", "BatchNorm2d", "Sequential"],
    "nn.modules.module": ["Module", "_addindent", "_IncompatibleKeys"],
    "nn.modules.activation": ["ReLU", "GELU", "Softmax", "MultiheadAttention", "PReLU",
                              "LeakyReLU", "Tanh", "Sigmoid", "SiLU"],
    "nn.modules.batchnorm": ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "_BatchNorm",
                             "_NormBase"],
    "nn.modules.container": ["Sequential", "ModuleList", "ModuleDict", "ParameterList",
                             "ParameterDict"],
    "nn.modules.conv": ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
                        "ConvTranspose3d", "_ConvNd", "_ConvTransposeNd", "_single", "_pair",
                        "_triple", "_reverse_repeat_tuple"],
    "nn.modules.distance": ["PairwiseDistance", "CosineSimilarity"],
    "nn.modules.dropout": ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                           "FeatureAlphaDropout", "_DropoutNd"],
    "nn.modules.flatten": ["Flatten", "Unflatten"],
    "nn.modules.fold": ["Fold", "Unfold"],
    "nn.modules.instancenorm": ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
                                "_InstanceNorm"],
    "nn.modules.linear": ["Identity", "Linear", "Bilinear"],
    "nn.modules.loss": ["L1Loss", "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCELoss",
                        "BCEWithLogitsLoss", "KLDivLoss", "HuberLoss", "SmoothL1Loss",
                        "SoftMarginLoss", "_Loss", "_WeightedLoss"],
    "nn.modules.normalization": ["LayerNorm", "GroupNorm"],
    "nn.modules.padding": ["ConstantPad2d", "ReflectionPad2d", "ReplicationPad2d", "ZeroPad2d",
                           "CircularPad2d"],
    "nn.modules.pixelshuffle": ["PixelShuffle", "PixelUnshuffle"],
    "nn.modules.pooling": ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d",
                           "AvgPool3d", "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "_MaxPoolNd",
                           "_AdaptiveAvgPoolNd", "_AdaptiveMaxPoolNd"],
    "nn.modules.rnn": ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell",
                       "GRUCell"],
    "nn.modules.sparse": ["Embedding"],
    "nn.modules.transformer": ["Transformer", "TransformerEncoder", "TransformerDecoder",
                               "TransformerEncoderLayer", "TransformerDecoderLayer",
                               "_get_clones", "_get_activation_fn", "_detect_is_causal_mask",
                               "_generate_square_subsequent_mask"],
    "nn.modules.upsampling": ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"],
    "nn.modules.utils": ["consume_prefix_in_state_dict_if_present", "_single", "_pair",
                         "_triple", "_quadruple", "_ntuple", "_reverse_repeat_tuple"],
    "nn.utils": ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
                 "clip_grads_with_norm_", "parameters_to_vector", "vector_to_parameters", "rnn",
                 "stateless", "fuse_conv_bn_eval", "fuse_linear_bn_eval"],
    "nn.utils.fusion": ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
                        "fuse_linear_bn_weights"],
    "nn.utils.clip_grad": ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_"],
    "nn.utils.convert_parameters": ["parameters_to_vector", "vector_to_parameters"],
    "nn.utils.rnn": ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence",
                     "pad_sequence", "pack_sequence", "unpack_sequence", "unpad_sequence",
                     "invert_permutation"],
    "nn.utils.stateless": ["functional_call"],
    "nn.parallel": ["DataParallel", "DistributedDataParallel", "data_parallel"],
    "nn.parallel.data_parallel": ["DataParallel", "data_parallel"],
    "nn.parallel.distributed": ["DistributedDataParallel"],
    "autograd": ["backward", "grad", "Variable", "Function", "no_grad", "enable_grad",
                 "set_grad_enabled", "inference_mode", "gradcheck", "gradgradcheck",
                 "detect_anomaly", "set_detect_anomaly", "forward_ad", "function", "functional",
                 "graph", "grad_mode", "profiler", "variable"],
    "autograd.anomaly_mode": ["detect_anomaly", "set_detect_anomaly"],
    "autograd.forward_ad": ["dual_level", "make_dual", "unpack_dual", "UnpackedDualTensor",
                            "enter_dual_level", "exit_dual_level"],
    "autograd.function": ["Function", "FunctionCtx", "once_differentiable", "InplaceFunction",
                          "BackwardCFunction", "FunctionMeta"],
    "autograd.functional": ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"],
    "autograd.grad_mode": ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
                           "set_multithreading_enabled"],
    "autograd.gradcheck": ["gradcheck", "gradgradcheck", "GradcheckError"],
    "autograd.graph": ["Node", "saved_tensors_hooks", "save_on_cpu",
                       "disable_saved_tensors_hooks", "register_multi_grad_hook"],
    "autograd.profiler": ["profile", "record_function"],
    "autograd.variable": ["Variable", "VariableMeta"],
    "optim": ["Optimizer", "SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "LBFGS", "lr_scheduler",
              "swa_utils"],
    "optim.optimizer": ["Optimizer", "required", "ParamsT", "StateDict"],
    "optim.lr_scheduler": ["LRScheduler", "_LRScheduler", "LambdaLR", "StepLR", "MultiStepLR",
                           "ExponentialLR", "CosineAnnealingLR", "ReduceLROnPlateau"],
    "optim.sgd": ["SGD", "sgd"],
    "optim.adam": ["Adam", "adam"],
    "optim.adamw": ["AdamW"],
    "optim.lbfgs": ["LBFGS"],
    "optim.adagrad": ["Adagrad", "adagrad"],
    "optim.rmsprop": ["RMSprop", "rmsprop"],
    "optim.swa_utils": ["AveragedModel", "SWALR", "update_bn", "get_ema_multi_avg_fn",
                        "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"],
    "utils": ["checkpoint", "data", "hooks"],
    "utils.hooks": ["RemovableHandle", "unserializable_hook"],
    "utils.checkpoint": ["checkpoint", "checkpoint_sequential"],
    "utils._pytree": ["tree_flatten", "tree_unflatten", "tree_map", "tree_leaves", "TreeSpec",
                      "LeafSpec"],
    "utils.data": ["Dataset", "IterableDataset", "TensorDataset", "DataLoader", "Sampler",
                   "DistributedSampler", "random_split", "default_collate"],
    "utils.data.dataset": ["Dataset", "IterableDataset", "TensorDataset", "ConcatDataset",
                           "Subset", "random_split"],
    "utils.data.sampler": ["Sampler", "SequentialSampler", "RandomSampler", "BatchSampler"],
    "utils.data.dataloader": ["DataLoader", "get_worker_info", "default_collate"],
    "utils.data.distributed": ["DistributedSampler"],
    "distributed": ["is_available", "is_initialized", "init_process_group",
                    "destroy_process_group", "get_rank", "get_world_size"],
    "utils.benchmark": ["Timer", "Measurement", "Compare"],
    "optim.adadelta": ["Adadelta"], "optim.adamax": ["Adamax"], "optim.asgd": ["ASGD"],
    "optim.nadam": ["NAdam"], "optim.radam": ["RAdam"], "optim.rprop": ["Rprop"],
    "nn.modules.adaptive": ["AdaptiveLogSoftmaxWithLoss"],
    "nn.modules.channelshuffle": ["ChannelShuffle"],
    "nn.utils.init": ["skip_init"],
    "nn.utils.memory_format": ["convert_conv2d_weight_memory_format",
                               "convert_conv3d_weight_memory_format"],
    "nn.utils.parametrize": ["register_parametrization", "remove_parametrizations", "cached",
                             "is_parametrized", "type_before_parametrizations",
                             "ParametrizationList", "transfer_parametrizations_and_params"],
    "nn.utils.parametrizations": ["orthogonal", "spectral_norm", "weight_norm"],
    "nn.utils.prune": ["BasePruningMethod", "PruningContainer", "Identity",
                       "RandomUnstructured", "L1Unstructured", "RandomStructured",
                       "LnStructured", "CustomFromMask", "identity", "random_unstructured",
                       "l1_unstructured", "random_structured", "ln_structured",
                       "global_unstructured", "custom_from_mask", "remove", "is_pruned"],
    "nn.utils.spectral_norm": ["SpectralNorm", "spectral_norm", "remove_spectral_norm"],
    "nn.utils.weight_norm": ["WeightNorm", "weight_norm", "remove_weight_norm"],
    "nn.modules.lazy": ["LazyModuleMixin"],
    "nn.modules.linear_cross_entropy_options": ["LinearCrossEntropyOptions"],
    "optim.sparse_adam": ["SparseAdam"],
}
# Submodules that import only where an optional package is installed (in ember as in PyTorch).
OPTIONAL = {"utils.tensorboard": ("tensorboard", ["SummaryWriter"])}
for _path, (_package, _names) in OPTIONAL.items():
    if importlib.util.find_spec(_package) is not None:
        PATHS[_path] = _names

# PyTorch submodules of the swept packages that ember does not have, and why.
_GPU_ONLY = "multi-GPU plumbing of DataParallel (ember's DataParallel uses at most one GPU)"
NOT_IN_EMBER = {
    "nn.backends": "PyTorch-internal", "nn.cpp": "C++ module wrappers",
    "nn.intrinsic": "quantization", "nn.qat": "quantization", "nn.quantizable": "quantization",
    "nn.quantized": "quantization",
    "nn.modules.linear_cross_entropy": "PyTorch's chunked kernels of linear_cross_entropy "
                                       "(all private; ember computes the logits whole)",
    "nn.parallel.comm": _GPU_ONLY, "nn.parallel.parallel_apply": _GPU_ONLY,
    "nn.parallel.replicate": _GPU_ONLY, "nn.parallel.scatter_gather": _GPU_ONLY,
    "autograd.profiler_legacy": "ember's profiler records no events",
    "autograd.profiler_util": "ember's profiler records no events",
    "utils.backcompat": "PyTorch-internal", "utils.backend_registration": "PyTorch-internal",
    "utils.bundled_inputs": "TorchScript",
    "utils.collect_env": "PyTorch's build report", "utils.cpp_backtrace": "C++",
    "utils.cpp_extension": "C++ extensions", "utils.debug_log": "PyTorch-internal",
    "utils.deterministic": "not implemented", "utils.dlpack": "not implemented yet",
    "utils.file_baton": "PyTorch-internal", "utils.flop_counter": "not implemented",
    "utils.hipify": "ROCm", "utils.jit": "TorchScript", "utils.mkldnn": "oneDNN",
    "utils.mobile_optimizer": "TorchScript", "utils.model_dump": "TorchScript",
    "utils.model_zoo": "downloads (torch.hub): not implemented",
    "utils.module_tracker": "not implemented", "utils.serialization": "PyTorch-internal",
    "utils.show_pickle": "PyTorch-internal",
    "utils.throughput_benchmark": "C++", "utils.viz": "PyTorch-internal",
    "utils.weak": "PyTorch-internal",
    "utils.data.backward_compatibility": "PyTorch-internal",
    "utils.data.datapipes": "datapipes: not implemented", "utils.data.graph": "datapipes",
    "utils.data.graph_settings": "datapipes",
}

_SWEPT = ["nn", "nn.modules", "nn.utils", "nn.parallel", "autograd", "optim", "utils",
          "utils.data"]
# Public namespaces where a name found at a submodule path is expected to be the same object.
_NAMESPACES = ["", "nn", "nn.functional", "nn.init", "nn.utils", "autograd", "optim",
               "optim.lr_scheduler", "utils.data"]


def _mod(root, path):
    return importlib.import_module(root + ("." + path if path else ""))


@pytest.mark.parametrize("path", sorted(PATHS))
def test_path_imports_and_exports_torch_names(torch, path):
    em, tm = _mod("ember", path), _mod("torch", path)
    for name in PATHS[path]:
        assert hasattr(tm, name), f"torch.{path}.{name} is not PyTorch's"
        got = getattr(em, name)
        want = getattr(tm, name)
        assert type(got) is not type(ember) or type(want) is type(torch), (path, name)
        # The same object as in the public namespaces that have it, wherever PyTorch's is.
        for ns in _NAMESPACES:
            ens = _mod("ember", ns)
            if ns != path and hasattr(ens, name) and getattr(_mod("torch", ns), name, None) is want:
                assert getattr(ens, name) is got, (path, ns, name)


def test_layer_class_hierarchy_matches_torch(torch):
    """``isinstance(m, X)`` answers as in PyTorch for every pair of layer classes (public and
    the private bases in PATHS): AvgPool3d is not an AvgPool2d, AdaptiveMaxPool2d not an
    _AdaptiveAvgPoolNd, a BatchNorm2d is a _BatchNorm, ..."""
    classes = {}
    for path, names in PATHS.items():
        if path.startswith("nn"):
            for name in names:
                t = getattr(_mod("torch", path), name)
                if isinstance(t, type) and issubclass(t, torch.nn.Module):
                    classes[name] = (getattr(_mod("ember", path), name), t)
    for name in ember.nn.modules.__all__:
        if hasattr(torch.nn, name):
            classes[name] = (getattr(ember.nn, name), getattr(torch.nn, name))
    wrong = [(a, b) for a, (ea, ta) in classes.items() for b, (eb, tb) in classes.items()
             if issubclass(ea, eb) != issubclass(ta, tb)]
    assert len(classes) > 100 and wrong == []


def test_every_torch_submodule_is_accounted_for(torch):
    seen = set()
    for pkg in _SWEPT:
        for info in pkgutil.iter_modules(_mod("torch", pkg).__path__):
            if info.name.startswith("_"):
                continue
            sub = f"{pkg}.{info.name}"
            seen.add(sub)
            assert (sub in PATHS or sub in OPTIONAL) != (sub in NOT_IN_EMBER), sub
    for sub in NOT_IN_EMBER:
        assert sub in seen, f"{sub} is no longer a PyTorch submodule"
        with pytest.raises(ImportError):
            _mod("ember", sub)


@pytest.mark.slow
def test_paths_through_the_torch_alias(torch, tmp_path):
    """A script importing deep paths prints the same under ``python -m ember run``."""
    script = tmp_path / "paths.py"
    script.write_text(textwrap.dedent("""
        import torch
        import torch.distributed as dist
        import torch.nn as nn
        from torch.autograd.variable import Variable
        from torch.nn.common_types import _size_2_t
        from torch.nn.modules.activation import MultiheadAttention
        from torch.nn.modules.batchnorm import _BatchNorm
        from torch.nn.modules.loss import _Loss
        from torch.nn.modules.module import Module
        from torch.nn.modules.utils import _pair, _single, _triple
        from torch.nn.parallel import DistributedDataParallel as DDP
        from torch.optim.lr_scheduler import _LRScheduler
        from torch.utils.data.distributed import DistributedSampler
        from torch.utils.hooks import RemovableHandle

        print(isinstance(nn.BatchNorm2d(3), _BatchNorm), issubclass(nn.MSELoss, _Loss))
        print(Module is nn.Module, MultiheadAttention is nn.MultiheadAttention)
        print(_pair(3), _single([1, 2]), _triple((1, 2, 3)))
        print(isinstance(Variable(torch.ones(1)), torch.Tensor), _size_2_t is not None)
        print(dist.is_initialized(), issubclass(_LRScheduler, torch.optim.lr_scheduler.LRScheduler))
        print(list(DistributedSampler(range(7), num_replicas=3, rank=2, shuffle=False)))
        print(isinstance(nn.Linear(1, 1).register_forward_hook(lambda *a: None), RemovableHandle))
        model = nn.DataParallel(nn.Linear(2, 2))
        print(list(model.state_dict()), type(model.module).__name__)
        try:
            DDP(nn.Linear(2, 2))
        except ValueError as e:
            print("ValueError:", e)
    """))
    want = io.StringIO()
    with contextlib.redirect_stdout(want):  # PyTorch: in this process (already imported)
        exec(compile(script.read_text(), str(script), "exec"), {"__name__": "__main__"})
    want = want.getvalue()
    got = subprocess.run([sys.executable, "-m", "ember", "run", str(script)],
                         capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    assert got.stdout == want
    assert got.stderr == ""  # (no runpy warning: ``import ember`` leaves ember.__main__ alone)


# --- torch.nn.modules.utils -----------------------------------------------------------------

@pytest.mark.parametrize("arg", [3, 2.5, (1, 2), [4], (), range(3), "ab"])
def test_ntuple_helpers(torch, arg):
    from torch.nn.modules import utils as tu

    from ember.nn.modules import utils as eu
    for name in ("_single", "_pair", "_triple", "_quadruple"):
        assert getattr(eu, name)(arg) == getattr(tu, name)(arg)
        assert getattr(eu, name).__name__ == getattr(tu, name).__name__
    assert eu._reverse_repeat_tuple((1, 2, 3), 2) == tu._reverse_repeat_tuple((1, 2, 3), 2)


def test_consume_prefix_in_state_dict(torch):
    from collections import OrderedDict

    from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present as tconsume

    from ember.nn.modules.utils import consume_prefix_in_state_dict_if_present as econsume

    def make():
        sd = OrderedDict([("module.a", 1), ("module.b.c", 2), ("other", 3)])
        sd._metadata = OrderedDict([("", {}), ("module", {"v": 1}), ("module.b", {"v": 2}),
                                    ("x", {})])
        return sd
    t, e = make(), make()
    tconsume(t, "module.")
    econsume(e, "module.")
    assert list(e.items()) == list(t.items())
    assert list(e._metadata.items()) == list(t._metadata.items())


# --- DataParallel / DistributedDataParallel / torch.distributed ----------------------------

def test_data_parallel_without_gpu_wraps_module(torch):
    if ember.cuda.is_available():
        pytest.skip("checks the no-GPU behaviour")
    lin = ember.nn.Linear(2, 3)
    dp = ember.nn.DataParallel(lin)
    tdp = torch.nn.DataParallel(torch.nn.Linear(2, 3))
    assert repr(dp) == repr(tdp)
    assert list(dp.state_dict()) == list(tdp.state_dict()) == ["module.weight", "module.bias"]
    assert dp.module is lin and dp.device_ids == tdp.device_ids == []
    x = ember.randn(4, 2)
    assert ember.equal(dp(x), lin(x))
    assert dp(x).grad_fn is not None
    assert list(dict(dp.named_parameters())) == list(dict(tdp.named_parameters()))
    # A DataParallel checkpoint loads into the bare module once the prefix is stripped.
    sd = dp.state_dict()
    ember.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, "module.")
    fresh = ember.nn.Linear(2, 3)
    fresh.load_state_dict(sd)
    assert ember.equal(fresh(x), lin(x))


def test_data_parallel_function_needs_a_device(torch):
    if ember.cuda.is_available():
        pytest.skip("checks the no-GPU behaviour")
    with pytest.raises(RuntimeError) as want:
        torch.nn.parallel.data_parallel(torch.nn.Linear(2, 2), torch.ones(1, 2))
    with pytest.raises(RuntimeError) as got:
        ember.nn.parallel.data_parallel(ember.nn.Linear(2, 2), ember.ones(1, 2))
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("kwargs", [{}, {"device_ids": [0]}, {"find_unused_parameters": True}])
def test_ddp_without_process_group(torch, kwargs):
    for module in ("Linear", "ReLU"):
        args = (2, 2) if module == "Linear" else ()
        with pytest.raises(Exception) as want:
            torch.nn.parallel.DistributedDataParallel(getattr(torch.nn, module)(*args), **kwargs)
        with pytest.raises(Exception) as got:
            ember.nn.parallel.DistributedDataParallel(getattr(ember.nn, module)(*args), **kwargs)
        assert type(got.value) is type(want.value)
        assert str(got.value) == str(want.value)


def test_without_a_process_group_distributed_calls_fail_as_pytorchs(torch):
    """Before ``init_process_group`` (nanoGPT imports these names at the top and guards its
    calls), what needs the default group fails as PyTorch's does when there is none."""
    import importlib.util

    dist = ember.distributed
    assert dist.is_available() is (importlib.util.find_spec("mpi4py") is not None)
    assert dist.is_initialized() is False
    t = ember.zeros(2)
    for name, args in [("destroy_process_group", ()), ("get_rank", ()), ("get_world_size", ()),
                       ("barrier", ()), ("all_reduce", (t,)), ("broadcast", (t, 0)),
                       ("all_gather", ([t], t)), ("reduce", (t, 0))]:
        with pytest.raises(Exception) as want:
            getattr(torch.distributed, name)(*[torch.zeros(2) if a is t else
                                               [torch.zeros(2)] if isinstance(a, list) else a
                                               for a in args])
        with pytest.raises(type(want.value), match=re.escape(str(want.value))):
            getattr(dist, name)(*args)


# --- DistributedSampler -----------------------------------------------------------------------

_SAMPLER_CASES = [(n, r, drop) for n in (0, 1, 5, 7, 10, 12) for r in (1, 2, 3, 4)
                  for drop in (False, True)]


def _shares(lib, n, replicas, drop_last, shuffle, seed=0, epoch=None):
    out = []
    for rank in range(replicas):
        s = lib.utils.data.DistributedSampler(range(n), num_replicas=replicas, rank=rank,
                                              shuffle=shuffle, seed=seed, drop_last=drop_last)
        if epoch is not None:
            s.set_epoch(epoch)
        out.append((list(s), len(s), s.num_samples, s.total_size))
    return out


@pytest.mark.parametrize("n,replicas,drop_last", _SAMPLER_CASES)
def test_distributed_sampler_in_order(torch, n, replicas, drop_last):
    assert (_shares(ember, n, replicas, drop_last, shuffle=False)
            == _shares(torch, n, replicas, drop_last, shuffle=False))


@pytest.mark.parametrize("n,replicas,drop_last", _SAMPLER_CASES[::3])
def test_distributed_sampler_shuffled(torch, monkeypatch, n, replicas, drop_last):
    """PyTorch's sampler, given ember's permutation for ``seed + epoch`` (ember's random
    numbers are not PyTorch's), must split and pad it exactly as ember's sampler does."""
    real_randperm = torch.randperm

    def ember_randperm(k, generator=None, **kwargs):
        g = ember.Generator()
        g.manual_seed(generator.initial_seed())
        return real_randperm(0).new_tensor(ember.randperm(k, generator=g).tolist())

    for seed, epoch in ((0, None), (3, 0), (3, 5)):
        got = _shares(ember, n, replicas, drop_last, True, seed, epoch)
        with monkeypatch.context() as m:
            m.setattr(torch, "randperm", ember_randperm)
            want = _shares(torch, n, replicas, drop_last, True, seed, epoch)
        assert got == want


def test_distributed_sampler_shuffles_per_epoch():
    s = ember.utils.data.DistributedSampler(range(50), num_replicas=2, rank=0, seed=1)
    first = list(s)
    assert list(s) == first  # same epoch, same order
    s.set_epoch(1)
    assert list(s) != first and sorted(set(first) | set(list(s))) != []
    other = ember.utils.data.DistributedSampler(range(50), num_replicas=2, rank=1, seed=1)
    other.set_epoch(1)
    assert sorted(list(s) + list(other)) == list(range(50))  # the replicas partition it


@pytest.mark.parametrize("kwargs", [{}, {"num_replicas": 2}, {"rank": 0},
                                    {"num_replicas": 2, "rank": 2},
                                    {"num_replicas": 2, "rank": -1},
                                    {"num_replicas": 1, "rank": 5}])
def test_distributed_sampler_errors(torch, kwargs):
    with pytest.raises(Exception) as want:
        torch.utils.data.DistributedSampler(range(4), **kwargs)
    with pytest.raises(Exception) as got:
        ember.utils.data.DistributedSampler(range(4), **kwargs)
    assert type(got.value) is type(want.value)
    assert str(got.value) == str(want.value)


def test_distributed_sampler_in_a_dataloader(torch):
    def batches(lib):
        ds = lib.utils.data.TensorDataset(lib.arange(10))
        s = lib.utils.data.DistributedSampler(ds, num_replicas=3, rank=1, shuffle=False)
        return [b[0].tolist() for b in lib.utils.data.DataLoader(ds, batch_size=2, sampler=s)]
    assert batches(ember) == batches(torch)


# --- torch.autograd.profiler --------------------------------------------------------------

def test_record_function_is_a_context_and_decorator(torch):
    def scenario(lib):
        rf = lib.autograd.profiler.record_function

        @rf("step")
        def step(x):
            """step's docstring."""
            return x * 2
        with rf("region", "args") as r:
            y = step(lib.ones(2))
        return r.name, r.args, y.tolist(), step.__name__, step.__doc__
    assert scenario(ember) == scenario(torch)


def test_profile_runs_the_block_and_refuses_tables(torch):
    def entering(lib):
        p = lib.autograd.profiler.profile()
        seen = []
        with p as entered:
            seen.append(entered is p)
        for nest in (False, True):
            q = lib.autograd.profiler.profile()
            try:
                with q:
                    if nest:
                        with q:
                            pass
                    else:
                        pass
                with q:
                    pass
            except RuntimeError as e:
                seen.append(str(e))
        with lib.autograd.profiler.profile(enabled=False) as off:
            seen.append(off)
        return seen
    assert entering(ember) == entering(torch)
    with ember.autograd.profiler.profile() as prof:
        ember.ones(2).sum()
    for read in (prof.key_averages, prof.table, prof.total_average, lambda: prof.function_events,
                 lambda: str(prof), lambda: prof.export_chrome_trace("trace.json")):
        with pytest.raises(NotImplementedError, match="records no events"):
            read()


# --- torch.utils.hooks, torch.autograd.variable, deprecated aliases ------------------------

def test_removable_handle(torch):
    def scenario(lib):
        from collections import OrderedDict
        RH = lib.utils.hooks.RemovableHandle
        hooks, extra = OrderedDict(), OrderedDict()
        h1 = RH(hooks)
        h2 = RH(hooks, extra_dict=extra)
        hooks[h1.id], hooks[h2.id], extra[h2.id] = "a", "b", True
        seen = [h2.id - h1.id]
        h1.remove()
        h1.remove()  # twice is fine
        seen.append((list(hooks.values()), len(extra)))
        with h2 as entered:
            seen.append(entered is h2)
        seen.append((list(hooks.values()), len(extra)))
        del hooks
        RH(OrderedDict()).remove()
        return seen
    assert scenario(ember) == scenario(torch)


def test_module_hook_handles_are_removable_handles():
    m = ember.nn.Linear(2, 2)
    calls = []
    h = m.register_forward_hook(lambda *a: calls.append(1))
    assert isinstance(h, ember.utils.hooks.RemovableHandle)
    m(ember.ones(2))
    h.remove()
    m(ember.ones(2))
    assert calls == [1]


def test_variable(torch):
    def scenario(lib):
        V = lib.autograd.Variable
        t = lib.ones(2)
        v = V(t, requires_grad=True)
        x = lib.ones(2, requires_grad=True)
        w = V(x * 2)
        seen = [v is t, v.requires_grad, t.requires_grad, v.is_leaf, w.grad_fn, w.requires_grad,
                isinstance(t, V), isinstance(3, V)]
        v.data.add_(1)
        seen.append(t.tolist())  # shares t's data
        for bad in ([1.0], lambda: V(lib.ones(2, dtype=lib.int64), requires_grad=True)):
            try:
                bad() if callable(bad) else V(bad)
            except (TypeError, RuntimeError) as e:
                seen.append((type(e).__name__, str(e)))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            V(t, volatile=True)
        seen.append([(w.category.__name__, str(w.message)) for w in caught])
        return seen
    assert scenario(ember) == scenario(torch)


def test_deprecated_aliases_warn_as_torch(torch):
    def scenario(lib):
        lin = lib.nn.Linear(2, 2)
        with lib.no_grad():
            lin.weight.fill_(0.5)
            lin.bias.fill_(0.0)
        lin(lib.ones(1, 2)).sum().backward()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            norm = lib.nn.utils.clip_grad_norm(lin.parameters(), 0.5)
            out = lib.nn.utils.stateless.functional_call(
                lin, {"weight": lib.ones(2, 2), "bias": lib.zeros(2)}, (lib.ones(1, 2),))
        return (round(norm.item(), 5), out.tolist(),
                [(w.category.__name__, str(w.message)) for w in caught])
    assert scenario(ember) == scenario(torch)


def test_common_types_are_type_aliases():
    from ember.nn.common_types import _size_2_t, _size_any_opt_t
    assert int in _size_2_t.__args__ and tuple[int, int] in _size_2_t.__args__
    assert tuple[int | None, ...] in _size_any_opt_t.__args__


@pytest.mark.parametrize("name,args", [("uniform", ()), ("normal", ()), ("constant", (0.5,)),
                                       ("eye", ()), ("dirac", ()), ("xavier_uniform", ()),
                                       ("xavier_normal", ()), ("kaiming_uniform", ()),
                                       ("kaiming_normal", ()), ("orthogonal", ())])
def test_deprecated_init_names(torch, name, args):
    def run(lib):
        t = lib.zeros(3, 3, 1, 1) if name == "dirac" else lib.zeros(3, 4)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(lib.nn.init, name)(t, *args)
        values = t.tolist() if name in ("constant", "eye", "dirac") else None
        return (out is t, values, getattr(lib.nn.init, name).__name__,
                [(w.category.__name__, str(w.message), w.filename) for w in caught])
    assert run(ember) == run(torch)
