"""The op spec tables of the test modules, in one place, for the tests that run every spec
through another mechanism (forward mode: ``test_forward_ad``; vmap: ``test_vmap``)."""
from . import test_sparse_spec
from .nn import (
    test_nn_attention,
    test_nn_embedding_bag,
    test_nn_functional,
    test_nn_losses,
    test_nn_losses_more,
    test_nn_pool_norm_more,
    test_nn_rms_norm,
    test_nn_sdpa_fused,
    test_nn_zoo_spec,
)
from .ops import (
    test_core_ops,
    test_ops_complex,
    test_ops_complex_views,
    test_ops_fft,
    test_ops_gamma,
    test_ops_indexing,
    test_ops_legacy,
    test_ops_linalg,
    test_ops_linalg_eig,
    test_ops_linalg_factor,
    test_ops_linalg_functions,
    test_ops_linalg_householder,
    test_ops_linalg_more,
    test_ops_pointwise,
    test_ops_random,
    test_ops_reduction,
    test_ops_shape,
    test_ops_special_functions,
)


def _specs(*modules):
    return [s for module in modules for s in module.SPECS]


# The op families' specs: pointwise, reduction, linear algebra, shape (core: the seeds' ops).
FAMILY_SPECS = _specs(test_core_ops, test_ops_pointwise, test_ops_reduction, test_ops_linalg,
                      test_ops_linalg_eig, test_ops_linalg_factor, test_ops_linalg_functions,
                      test_ops_linalg_householder, test_ops_shape, test_ops_special_functions)
INDEXING_SPECS = _specs(test_ops_indexing)
NN_SPECS = _specs(test_nn_losses, test_nn_functional, test_nn_attention, test_nn_sdpa_fused)
# The surface of issue 20: torch.fft, the gamma family of torch.special, the nn zoo, sparse COO
SURFACE_SPECS = _specs(test_ops_fft, test_ops_gamma, test_nn_embedding_bag, test_nn_losses_more,
                       test_nn_pool_norm_more, test_nn_rms_norm, test_nn_zoo_spec,
                       test_sparse_spec)
# The rest: complex numbers, the legacy names, more linear algebra, the random ops
OTHER_SPECS = _specs(test_ops_complex, test_ops_complex_views, test_ops_legacy,
                     test_ops_linalg_more, test_ops_random)
