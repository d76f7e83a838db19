"""``torch._dynamo.config``: the settings of PyTorch's graph capture, with its defaults.

ember's ``torch.compile`` runs eagerly (see ``ember._dynamo``), so these settings are kept
for scripts to set and read back and change nothing.
"""
from .._config_module import install

install(__name__, {
    "suppress_errors": False,
    "verbose": False,
    "cache_size_limit": 8,
    "recompile_limit": 8,
    "accumulated_cache_size_limit": 256,
    "accumulated_recompile_limit": 256,
    "capture_scalar_outputs": False,
    "capture_dynamic_output_shape_ops": False,
    "optimize_ddp": True,
    "automatic_dynamic_shapes": True,
    "assume_static_by_default": True,
    "specialize_int": False,
    "specialize_float": False,
    "force_parameter_static_shapes": True,
    "error_on_recompile": False,
    "guard_nn_modules": True,
    "skip_nnmodule_hook_guards": True,
    "allow_unspec_int_on_nn_module": False,
    "compiled_autograd": False,
    "replay_record_enabled": False,
    "rewrite_assert_with_torch_assert": True,
    "disable": False,
})
