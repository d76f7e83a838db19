"""The op spec tables of the test modules, in one place, for the tests that run every spec
through another mechanism (forward mode: ``test_forward_ad``; vmap: ``test_vmap``)."""
from .nn import (
    test_nn_functional,
    test_nn_losses,
)
from .ops import (
    test_core_ops,
    test_ops_indexing,
    test_ops_linalg,
    test_ops_linalg_eig,
    test_ops_linalg_factor,
    test_ops_linalg_functions,
    test_ops_linalg_householder,
    test_ops_pointwise,
    test_ops_reduction,
    test_ops_shape,
    test_ops_special_functions,
)

# The op families' specs: pointwise, reduction, linear algebra, shape (core: the seeds' ops).
FAMILY_SPECS = [s for module in (test_core_ops, test_ops_pointwise, test_ops_reduction,
                                 test_ops_linalg, test_ops_linalg_eig, test_ops_linalg_factor,
                                 test_ops_linalg_functions, test_ops_linalg_householder,
                                 test_ops_shape, test_ops_special_functions)
                for s in module.SPECS]
INDEXING_SPECS = list(test_ops_indexing.SPECS)
NN_SPECS = list(test_nn_losses.SPECS) + list(test_nn_functional.SPECS)
