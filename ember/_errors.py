"""PyTorch's error and warning texts, in one place, so every raise site says the same words."""
from __future__ import annotations

import os
import sys
import warnings

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn(message, category=UserWarning):
    """``warnings.warn`` attributed to the first caller outside ember, as PyTorch's C++
    warnings are to the Python line that called in (however many ember frames lie between:
    a public function may be reached through a wrapper, see ``numpy_keywords``)."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)

FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)
NON_SCALAR = "grad can be implicitly created only for scalar outputs"
NO_GRAD_FN = "element {i} of tensors does not require grad and does not have a grad_fn"
SHAPE_MISMATCH = (
    "Mismatch in shape: grad_output[{i}] has a shape of {gshape} and output[{i}] has a shape "
    "of {oshape}."
)
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_INPLACE = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)
INT_REQUIRES_GRAD = "only Tensors of floating point dtype can require gradients"
INT_FACTORY_REQUIRES_GRAD = (
    "Only Tensors of floating point and complex dtype can require gradients")
NONLEAF_REQUIRES_GRAD = (
    "you can only change requires_grad flags of leaf variables. If you want to use a "
    "computed variable in a subgraph that doesn't require differentiation use "
    "var_no_grad = var.detach()."
)
NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information."
)
MODIFIED_INPLACE = (
    "one of the variables needed for gradient computation has been modified by an inplace "
    "operation: [{type_name} {shape}]{which} is at version {version}; expected version "
    "{expected} instead. Hint: enable anomaly detection to find "
    "the operation that failed to compute its gradient, with "
    "torch.autograd.set_detect_anomaly(True, check_nan=False)."
)
UNUSED_INPUT = (
    "The differentiated Tensor at index {i} appears to not have been used in the graph. "
    "Set allow_unused=True if this is the desired behavior."
)
INPUT_NO_GRAD = "One of the differentiated Tensors does not require grad"
DEVICE_MISMATCH = (
    "Expected all tensors to be on the same device, but found at least two devices, "
    "{a} and {b}!"
)
BROADCAST = (
    "The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton "
    "dimension {dim}"
)
ITEM_NUMEL = "a Tensor with {n} elements cannot be converted to Scalar"
BOOL_AMBIGUOUS = "Boolean value of Tensor with more than one value is ambiguous"
VIEW_SIZE = "shape '{shape}' is invalid for input of size {numel}"
VIEW_STRIDE = (
    "view size is not compatible with input tensor's size and stride (at least one dimension "
    "spans across two contiguous subspaces). Use .reshape(...) instead."
)
MATMUL_SHAPES = "mat1 and mat2 shapes cannot be multiplied ({a0}x{a1} and {b0}x{b1})"
DIM_RANGE = "Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})"
INDEX_RANGE = "index {index} is out of bounds for dimension {dim} with size {size}"
CREATE_GRAPH_CYCLE = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using "
    "autograd.grad when creating the graph to avoid this. If you have to use this function, "
    "make sure to reset the .grad fields of your parameters to None after use to break the "
    "cycle and avoid the leak."
)

# Forward-mode AD (autograd.forward_ad).
TANGENT_SIZE = (
    "Trying to set a forward gradient that has a different size than that of the original "
    "Tensor, this is not supported. Tensor is of size {size} while the given forward gradient "
    "is of size {tangent}."
)
NO_JVP = (
    "Trying to use forward AD with {name} that does not support it because it has not been "
    "implemented yet.\nember declares an op's JVP beside its VJP in ember/ops (Op.defjvp or "
    "defop's jvp=)."
)

# vmap (ember.func.vmap; ember/ops/batching.py)
VMAP_RANDOM = ("vmap: called random operation while in randomness error mode. Please either use "
               "the 'same' or 'different' randomness flags on vmap or perform the randomness "
               "operation out of vmap")
VMAP_ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap "
             "over calling .item() on a Tensor, please try to rewrite what you're doing with "
             "other operations. If error is occurring somewhere inside PyTorch internals, please "
             "file a bug report.")
VMAP_CONTROL_FLOW = ("vmap: It looks like you're attempting to use a Tensor in some "
                     "data-dependent control flow. We don't support that yet, please file an "
                     "issue at https://github.com/pytorch/pytorch/issues .")
NO_STORAGE = "Cannot access data pointer of Tensor that doesn't have storage"
BACKWARD_IN_TRANSFORM = ("backward() called inside a functorch transform. This is not "
                         "supported, please use functorch.grad or functorch.vjp instead or call "
                         "backward() outside of functorch transforms.")

# ``out=`` (ember/_out.py)
OUT_AUTOGRAD = ("{name}(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad.")
OUT_CAST = "result type {result} can't be cast to the desired output type {out}"
OUT_CAT_CAST = "torch.cat(): input types can't be cast to the desired output type {out}"
OUT_EXACT = "Expected out tensor to have dtype {expected}, but got {got} instead"
OUT_DTYPE = "dtype {dtype} does not match dtype of out parameter ({out})"
ARANGE_OUT_RESIZED = (
    "The number of elements in the out tensor of shape {old} is {old_numel} which does not match "
    "the computed number of elements {numel}. Note that this may occur as a result of rounding "
    "error. The out tensor will be resized to a tensor of shape {new_tuple}."
)
OUT_RESIZED = (
    "An output with one or more elements was resized since it had shape {old}, which does not "
    "match the required output shape {new}. This behavior is deprecated, and in a future "
    "PyTorch release outputs will not be resized unless they have zero elements. You can "
    "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
    "t.resize_(0)."
)
