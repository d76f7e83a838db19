"""``torch._inductor.config``: the compiler's settings that scripts commonly set, with
PyTorch's defaults. They change nothing in ember (no compiler: ``torch.compile`` runs
eagerly); other names raise AttributeError, as in PyTorch."""
from .._config_module import install

install(__name__, {
    "debug": False,
    "coordinate_descent_tuning": False,
    "coordinate_descent_check_all_directions": False,
    "fx_graph_cache": True,
    "autotune_local_cache": True,
    "freezing": False,
    "max_autotune": False,
    "max_autotune_gemm": False,
    "epilogue_fusion": True,
    "aggressive_fusion": False,
    "force_fuse_int_mm_with_mul": False,
    "use_mixed_mm": True,
    "fallback_random": False,
    "benchmark_kernel": False,
    "conv_1x1_as_mm": False,
    "shape_padding": True,
    "layout_optimization": True,
    "cpp_wrapper": False,
    "triton": {"unique_kernel_names": True, "cudagraphs": False, "cudagraph_trees": True},
    "cpp": {"threads": -1, "simdlen": None},
})
