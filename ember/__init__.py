"""ember: PyTorch's autograd, rebuilt as a readable Python library on NumPy.

``import ember as torch`` and ordinary PyTorch code runs: tensors, reverse-mode autograd,
PyTorch's printing, errors and warnings.
"""
from __future__ import annotations

from math import e, inf, nan, pi  # torch.pi & co. are Python floats

import numpy as _np

from . import (  # noqa: F401
    _tensor_methods,  # noqa: F401  (binds methods and operators onto Tensor)
    accelerator,  # torch.accelerator: ember's one accelerator is CUDA through CuPy
    amp,  # torch.amp: autocast, GradScaler
    autograd,
    cpu,
    cuda,
    distributed,  # torch.distributed: not implemented yet (is_available() is False)
    distributions,  # torch.distributions: all of it (distributions, transforms, constraints, KL)
    fft,  # the torch.fft namespace
    func,  # the torch.func namespace: function transforms
    linalg,  # the torch.linalg namespace
    nn,
    optim,
    random,  # the torch.random namespace: seeds, states, fork_rng
    sparse,  # torch.sparse: COO basics (ember/sparse)
    special,  # the torch.special namespace
    testing,  # torch.testing: assert_close, make_tensor
    utils,
    version,  # torch.version
    viz,  # ember's own: pictures of the backward graph
)
from ._creation import (
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    scalar_tensor,
    tensor,
    tril_indices,
    triu_indices,
    zeros,
    zeros_like,
)
from ._device import device, get_default_device, set_default_device
from ._dtype_utils import *  # noqa: F403  (can_cast, is_complex, pi...)
from ._dtypes import (
    bfloat16,
    bool,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    short,
    uint8,
)
from ._dtypes import result_type as _result_type
from ._factories import *  # noqa: F403  (logspace, asarray, range, the windows...)
from ._inplace_functions import *  # noqa: F403  (torch.exp_(x) is x.exp_())
from ._memory_format import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)
from ._out import add_out as _add_out
from ._printing import get_printoptions, printoptions, set_printoptions
from ._random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from ._sampling import bernoulli, multinomial, normal, poisson
from ._tensor import Size, Tensor, layout, strided
from ._threads import (
    get_num_interop_threads,
    get_num_threads,
    set_num_interop_threads,
    set_num_threads,
)
from ._typeinfo import finfo, iinfo
from .amp.autocast_mode import (  # torch.autocast and its per-thread state
    autocast,
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled
from .autograd.anomaly_mode import set_detect_anomaly as set_anomaly_enabled
from .autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .func import vmap  # torch.vmap is torch.func.vmap
from .ops._exports import *  # noqa: F403  (the op functions declared public: ops/_surface.py)
from .ops.reduction import return_types  # torch.return_types (no op: the result classes)
from .serialization import load, save
from .sparse import mm as spmm  # torch.spmm: sparse @ dense
from .sparse import sparse_coo, sparse_coo_tensor

_tensor_methods.add_numpy_keywords(globals())  # axis= for dim=, keepdims= for keepdim=
_add_out(globals())  # PyTorch's out= on the functions that take it (ember/_out_rules.py)

# NumPy would warn on inf/nan results (log(0), exp overflow); PyTorch never does. This is
# process-wide NumPy state, set once here.
_np.seterr(all="ignore")
from ._threads import apply_default as _apply_default_threads  # noqa: E402

_apply_default_threads()  # PyTorch's default thread count for NumPy's BLAS (ember/_threads.py)
from ._malloc import apply_default as _apply_malloc_defaults  # noqa: E402

_apply_malloc_defaults()  # glibc keeps freed activations for the next step (ember/_malloc.py)

__version__ = "0.1.0"

# Modules scripts reach as ``torch.X`` without importing them (PyTorch imports them too).
from . import _dynamo, _inductor, backends, compiler, hub, jit, multiprocessing, onnx  # noqa: E402,F401
from ._compile import compile  # noqa: E402,F401
from .backends.cuda import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: E402,F401


def is_tensor(obj):
    return isinstance(obj, Tensor)


def result_type(tensor1, tensor2):
    return _result_type(tensor1, tensor2)


def detach(input):
    return input.detach()
