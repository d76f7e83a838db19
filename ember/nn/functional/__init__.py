"""``ember.nn.functional``: stateless neural-network functions (activations, losses, layers).

One module per family, each holding PyTorch's argument checks and messages in front of its
kernels, which live in the module of the same name under ``ember/ops/nn/`` (op declaration,
forward and derivative together):

- ``activation``: relu, elu, gelu, softplus, hardtanh, glu, prelu, softmax... (and ``relu_``...)
- ``dense``: linear, bilinear;  ``dropouts``: the dropouts
- ``loss``: regression and classification losses;  ``ranking_loss``: margin ranking, hinge
  and cosine embedding, triplet losses
- ``distance``: normalize, cosine similarity, pairwise distance
- ``sparse``: one_hot, embedding, embedding_bag
- ``conv``: convolutions, unfold, fold;  ``pooling``: max/avg/adaptive/lp pooling, unpooling
- ``normalization``: batch, layer, group, instance, RMS, local response norms
- ``resampling``: pad, interpolate, pixel and channel shuffle
- ``attention``: scaled dot-product and multi-head attention

This module re-exports their public functions: ``ember.nn.functional.relu`` is
``ember.nn.functional.activation.relu``.
"""
from __future__ import annotations

from ...ops.nn.loss import binary_cross_entropy_with_logits
from .activation import (
    celu,
    celu_,
    elu,
    elu_,
    gelu,
    glu,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    log_softmax,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    relu_,
    rrelu,
    rrelu_,
    selu,
    selu_,
    sigmoid,
    silu,
    softmax,
    softmin,
    softplus,
    softshrink,
    softsign,
    tanh,
    tanhshrink,
    threshold,
    threshold_,
)
from .attention import (
    multi_head_attention_forward,
    scaled_dot_product_attention,
)
from .conv import (
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    fold,
    unfold,
)
from .ctc import ctc_loss
from .dense import (
    bilinear,
    linear,
)
from .distance import (
    cosine_similarity,
    normalize,
    pairwise_distance,
)
from .dropouts import (
    alpha_dropout,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from .fractional import (
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)
from .grid import affine_grid, grid_sample
from .loss import (
    binary_cross_entropy,
    cross_entropy,
    gaussian_nll_loss,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    multi_margin_loss,
    multilabel_soft_margin_loss,
    nll_loss,
    poisson_nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
)
from .more import (
    ScalingType,
    SwizzleType,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d_with_indices,
    assert_int_or_pair,
    conv_tbc,
    grouped_mm,
    gumbel_softmax,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
    linear_cross_entropy,
    max_pool1d_with_indices,
    max_pool2d_with_indices,
    max_pool3d_with_indices,
    multilabel_margin_loss,
    native_channel_shuffle,
    pdist,
    scaled_grouped_mm,
    scaled_mm,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from .normalization import (
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    rms_norm,
)
from .pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from .ranking_loss import (
    cosine_embedding_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from .resampling import (
    channel_shuffle,
    interpolate,
    pad,
    pixel_shuffle,
    pixel_unshuffle,
)
from .sparse import (
    embedding,
    embedding_bag,
    one_hot,
)

__all__ = [
    "relu", "leaky_relu", "elu", "gelu", "silu", "mish", "softplus", "hardtanh", "sigmoid",
    "tanh", "relu6", "selu", "celu", "glu", "hardsigmoid", "hardswish", "logsigmoid", "softmin",
    "softshrink", "softsign", "tanhshrink", "threshold", "hardshrink", "prelu", "rrelu", "relu_",
    "elu_", "leaky_relu_", "hardtanh_", "selu_", "celu_", "threshold_", "rrelu_",
    "softmax", "log_softmax", "linear", "bilinear", "dropout", "mse_loss", "l1_loss",
    "smooth_l1_loss", "soft_margin_loss", "huber_loss", "nll_loss", "cross_entropy",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "cosine_similarity",
    "normalize", "one_hot",
    "pad", "embedding", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d",
    "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool2d", "batch_norm",
    "layer_norm", "group_norm", "interpolate",
    "max_pool3d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "scaled_dot_product_attention", "multi_head_attention_forward",
]

# More losses (ranking_loss, loss) and layers, listed after the first ones.
_more_losses = ["margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
                "multi_margin_loss",
                "triplet_margin_loss", "triplet_margin_with_distance_loss",
                "multilabel_soft_margin_loss", "poisson_nll_loss", "gaussian_nll_loss"]
_more = ["rms_norm"]
_more += ["embedding_bag"]
_more += ["channel_shuffle", "lp_pool1d", "lp_pool2d", "lp_pool3d", "local_response_norm"]
_more += ["max_unpool1d", "max_unpool2d", "max_unpool3d"]

_more += ["pdist", "gumbel_softmax", "multilabel_margin_loss", "conv_tbc",
          "native_channel_shuffle", "max_pool1d_with_indices", "max_pool2d_with_indices",
          "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices",
          "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices", "upsample",
          "upsample_nearest", "upsample_bilinear", "has_torch_function",
          "has_torch_function_unary", "has_torch_function_variadic", "assert_int_or_pair",
          "ScalingType", "SwizzleType", "scaled_mm", "scaled_grouped_mm", "grouped_mm"]
_more += ["affine_grid", "grid_sample", "ctc_loss", "fractional_max_pool2d",
          "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
          "fractional_max_pool3d_with_indices", "linear_cross_entropy"]

__all__ += _more_losses + _more
