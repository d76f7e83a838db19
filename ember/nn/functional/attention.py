"""Attention of ``torch.nn.functional``: ``scaled_dot_product_attention`` (PyTorch's math
backend, as composites of ordinary ops; ``ember.nn.attention`` chooses the enabled kernels)
and ``multi_head_attention_forward`` with its mask and shape checks (used by
``nn.MultiheadAttention`` and the transformer layers).
"""
from __future__ import annotations

import math
import warnings

from ... import _creation, _dtypes, _recording
from ..._tensor import Tensor
from ...ops import batching
from ...ops import shape as _shape
from ...ops.autocast import autocast_op
from ...ops.nn.attention import _flash_attention
from .. import attention as _attention
from .activation import softmax
from .dense import linear
from .dropouts import dropout
from .resampling import pad

# --------------------------------------------------------------------------- attention


def _is_bool(t):
    return t.dtype == _dtypes.bool


def _bool_mask_to_float(mask, dtype):
    """A boolean "take part" mask as an additive one: 0 where True, -inf where False."""
    zeros = _creation.zeros(tuple(mask.shape), dtype=dtype, device=mask.device)
    return zeros.masked_fill(mask.logical_not(), float("-inf"))


def _safe_softmax(x):
    """Softmax over the last dim where rows that are all -inf give zeros, not nan (PyTorch's
    ``_safe_softmax``); their gradient is zero too (the -inf are replaced before the softmax,
    so no nan reaches the backward)."""
    dead = (x == float("-inf")).all(-1, keepdim=True)
    # (the masked form under vmap, and while compiled mode records, where the test would be
    # a graph break: without dead rows it gives the same values and gradients, bit for bit)
    if _recording.state.recorder is None and not batching.is_batched(dead) and \
            not dead.any():
        return softmax(x, -1)
    return softmax(x.masked_fill(dead, 0.0), -1).masked_fill(dead, 0.0)


def _check_sdpa_inputs(query, key, value, attn_mask):
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{query.dtype._cpp_name} key.dtype: {key.dtype._cpp_name} and value.dtype: "
            f"{value.dtype._cpp_name} instead.")
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead.")
    if attn_mask is not None and attn_mask.dtype not in (_dtypes.bool, _dtypes.float32,
                                                         query.dtype):
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {attn_mask.dtype._cpp_name} and  query.dtype: "
            f"{query.dtype._cpp_name} instead.")


def _expand_gqa(query, key, value):
    """Grouped-query attention: repeat each key/value head for its group of query heads."""
    hq, hk, hv = query.size(-3), key.size(-3), value.size(-3)
    if hq == hk == hv:
        return key, value
    if hq % hk or hq % hv:  # (PyTorch's message stops short like this)
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    return key.repeat_interleave(hq // hk, -3), value.repeat_interleave(hq // hv, -3)


def _flash_applies(query, key, value, attn_mask, dropout_p):
    """Whether PyTorch's CPU runs its fused kernel here, which ember then runs as one op
    (``ops/nn/attention.py``): CPU tensors of 4 dims, float32 or float64, one head dim, one
    batch and head count (no broadcasting, no grouped heads), no empty sequence, unit strides
    in the head dim, no dropout, the kernel enabled. PyTorch's kernel also takes masks and
    grouped heads; ember gives those the math composite (same values, another grad_fn)."""
    if attn_mask is not None or dropout_p != 0 or not _attention._flash_enabled():
        return False
    q, k, v = query.shape, key.shape, value.shape  # (a vmap sample's: logical shapes)
    return (len(q) == len(k) == len(v) == 4 and query.dtype == key.dtype == value.dtype
            and query.dtype in _FLASH_DTYPES and query.device.type == "cpu"
            and q[:2] == k[:2] == v[:2] and k[2] == v[2] and q[3] == k[3] == v[3]
            and q[2] and k[2] and query.stride(-1) == key.stride(-1) == value.stride(-1) == 1)


_FLASH_DTYPES = (_dtypes.float32, _dtypes.float64)


@autocast_op("scaled_dot_product_attention")
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(query @ key^T * scale + mask) @ value``. Where PyTorch's CPU runs its fused
    kernel (``_flash_applies``), one op of that kernel's name; elsewhere step for step as
    PyTorch's math backend computes it (so values, rounding and the grad_fn match).

    A boolean ``attn_mask`` is True where a position takes part; a float one is added to the
    scores. Rows with no position taking part give zeros.
    """
    _check_sdpa_inputs(query, key, value, attn_mask)
    _attention._check_enabled(query, key, value, dropout_p)  # under nn.attention.sdpa_kernel
    if _flash_applies(query, key, value, attn_mask, dropout_p):
        if scale is None:
            scale = 1.0 / math.sqrt(query.size(-1))
        return _flash_attention(query, key, value, bool(is_causal), scale, {})
    if attn_mask is not None and _is_bool(attn_mask):
        attn_mask = _bool_mask_to_float(attn_mask, query.dtype)
    # Both query and key are scaled by sqrt(scale), for stability; a negative scale goes on q.
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    factor = math.sqrt(abs(scale))
    q = query * (-factor if scale < 0 else factor)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        causal = _creation.ones((q.size(-2), key.size(-2)), device=q.device).tril().bool()
        attn_mask = _bool_mask_to_float(causal, q.dtype)
    if enable_gqa:
        key, value = _expand_gqa(q, key, value)
    attn = q.matmul(key.transpose(-2, -1) * factor)
    if attn_mask is not None:
        # (a mask per sample under vmap, shared scores: the sum varies over more than attn)
        batched = batching.is_batched(attn_mask) and not batching.is_batched(attn)
        attn = attn + attn_mask if batched else attn.add_(attn_mask)
    attn = _safe_softmax(attn)
    if dropout_p > 0.0:
        if dropout_p > 1.0:
            raise RuntimeError(f"dropout probability has to be between 0 and 1, but got "
                               f"{dropout_p}")
        attn = dropout(attn, dropout_p)
    return attn.matmul(value)


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A boolean "masked out" mask as an additive float one (-inf where True); float masks
    pass unchanged."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if not _is_bool(mask) and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.", stacklevel=2)
    if not is_float:
        mask = _creation.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the input is batched (3-d query) or not (2-d); AssertionError on bad ranks."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                f"but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                    f"but found {attn_mask.dim()}-D tensor instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and attn_mask.shape != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def _in_projection_packed(q, k, v, w, b=None):
    """q, k, v projected by the packed weight ``w`` (q, k, v rows stacked); one matrix
    product where inputs are shared (self-attention, or key is value)."""
    E = q.size(-1)
    if k is v:
        if q is k:
            proj = linear(q, w, b).unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2)
            proj = proj.squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        kv = linear(k, w_kv, b_kv).unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2)
        kv = kv.squeeze(-2).contiguous()
        return linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """q, k, v projected by separate weights (key and value may have their own widths)."""
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for what, t, shape in (("query weights", w_q, (Eq, Eq)), ("key weights", w_k, (Eq, Ek)),
                           ("value weights", w_v, (Eq, Ev)), ("query bias", b_q, (Eq,)),
                           ("key bias", b_k, (Eq,)), ("value bias", b_v, (Eq,))):
        if t is not None and t.shape != shape:
            raise AssertionError(f"expecting {what} shape of {shape}, but got {t.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int,
                                 num_heads: int, in_proj_weight: Tensor | None,
                                 in_proj_bias: Tensor | None, bias_k: Tensor | None,
                                 bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float,
                                 out_proj_weight: Tensor, out_proj_bias: Tensor | None,
                                 training: bool = True, key_padding_mask: Tensor | None = None,
                                 need_weights: bool = True, attn_mask: Tensor | None = None,
                                 use_separate_proj_weight: bool = False,
                                 q_proj_weight: Tensor | None = None,
                                 k_proj_weight: Tensor | None = None,
                                 v_proj_weight: Tensor | None = None,
                                 static_k: Tensor | None = None, static_v: Tensor | None = None,
                                 average_attn_weights: bool = True,
                                 is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention over (L, N, E) inputs (or unbatched (L, E)), as
    ``nn.MultiheadAttention`` runs it; returns ``(attn_output, attn_weights or None)``.

    Boolean masks here are True where a position is *masked out* (the opposite of
    ``scaled_dot_product_attention``).
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:  # run as a batch of one, squeezed again at the end
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint alone tells scaled_dot_product_attention
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    # in-projection
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(
                    f"use_separate_proj_weight is True but {name}_proj_weight is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                                 v_proj_weight, b_q, b_k, b_v)

    # attention mask as (1 or N*heads, L, S)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if attn_mask.shape != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if attn_mask.shape != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    # learned key/value biases: one more source position
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = _shape.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _shape.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # heads into the batch: (N*heads, L or S, head_dim)
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _static_or_heads(k, static_k, "static_k", bsz * num_heads, head_dim)
    v = _static_or_heads(v, static_v, "static_v", bsz * num_heads, head_dim)

    if add_zero_attn:  # one more source position of zeros
        zeros = (bsz * num_heads, 1, head_dim)
        k = _shape.cat([k, _creation.zeros(zeros, dtype=k.dtype, device=k.device)], 1)
        v = _shape.cat([v, _creation.zeros(zeros, dtype=v.dtype, device=v.device)], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.size(1)

    if key_padding_mask is not None:  # merged into the attention mask
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(
            -1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0

    if need_weights:
        E = q.shape[-1]
        q_scaled = q * math.sqrt(1.0 / float(E))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            weights = attn_mask.baddbmm(q_scaled, k.transpose(-2, -1))
        else:
            weights = q_scaled.bmm(k.transpose(-2, -1))
        weights = softmax(weights, -1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = weights.bmm(v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.size(1))
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    # no weights wanted: scaled_dot_product_attention over (N, heads, L, head_dim)
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.size(1))
    return (out if is_batched else out.squeeze(1)), None


def _static_or_heads(x, static, name, batch_heads, head_dim):
    """Projected keys (or values) split into heads, or the given precomputed ``static`` ones."""
    if static is None:
        return x.view(x.shape[0], batch_heads, head_dim).transpose(0, 1)
    if static.size(0) != batch_heads:
        raise AssertionError(f"expecting {name}.size(0) of {batch_heads}, but got "
                             f"{static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.size(2)}")
    return static
