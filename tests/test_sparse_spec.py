"""Sparse COO gradients in the spec table (``tests/opspec.py``): a dense result of sparse
tensors built from values that require grad (``to_dense``, ``torch.sparse.mm``/``sum``,
``to_sparse``) — gradcheck and gradgradcheck in float64, values, dtypes, grad_fns and
gradients against PyTorch, forward mode and vmap through ``tests/spec_modules.py``. The rest
of the sparse surface is in ``test_sparse.py``."""
import warnings

import pytest

from .opspec import Spec, op_tests

IDX = [[0, 1, 1, 0], [2, 0, 2, 2]]  # (0, 2) stored twice: uncoalesced

# PyTorch warns once about its sparse invariant checks (off by default): not ember's concern
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")


def _coo(L, v, size=(2, 3)):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return L.sparse_coo_tensor(L.tensor(IDX), v, size)


# ember's sparse tensor keeps its indices and values, and builds a dense result with dense
# ops (index_put, index_add), where PyTorch has sparse kernels with nodes of their own
# (ToDenseBackward0, SparseAddmmBackward0): values and gradients are compared, not the names
COMPOSITE = dict(grad_fn_name=False)
SPECS = [
    Spec("sparse_coo_to_dense", lambda L, v: _coo(L, v).to_dense(), [((4,),)],
         **COMPOSITE),
    Spec("sparse_coo_hybrid_to_dense", lambda L, v: _coo(L, v, (2, 3, 2)).to_dense(),
         [((4, 2),)], **COMPOSITE),
    Spec("sparse_coalesce_to_dense", lambda L, v: _coo(L, v).coalesce().to_dense(), [((4,),)],
         **COMPOSITE),
    Spec("sparse_mm", lambda L, v, d: L.sparse.mm(_coo(L, v), d), [((4,), (3, 2))],
         **COMPOSITE),
    Spec("sparse_sum_dim", lambda L, v: L.sparse.sum(_coo(L, v), 1).to_dense(), [((4,),)],
         **COMPOSITE),
    Spec("to_sparse_to_dense", lambda L, x: x.to_sparse().to_dense() * 3, [((2, 3),)],
         **COMPOSITE),
]
test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)
