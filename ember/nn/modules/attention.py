"""``MultiheadAttention`` (PyTorch keeps it in ``torch.nn.modules.activation``).

PyTorch has a fused inference "fast path" for self-attention (eval mode, no gradient wanted,
``batch_first``...). It computes the same values as the general path but for one thing: a
query whose keys are all masked out gets NaN, where the general path without attention
weights (``need_weights=False``, which goes through ``scaled_dot_product_attention``) gives
zeros. ember has one path; where PyTorch would take the fast one, it computes the attention
weights explicitly (as ``need_weights=True`` does), which gives the NaN rows too.
"""
from __future__ import annotations

from ...autograd.grad_mode import is_grad_enabled
from ...backends import mha
from .. import functional as F
from ..functional.attention import _canonical_mask, _none_or_dtype
from ..init import constant_, xavier_normal_, xavier_uniform_
from ..module import Module
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear, _empty

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Attention over ``num_heads`` learned projections of query, key and value."""

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        kw = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(_empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(_empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_empty(3 * embed_dim, embed_dim, **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(_empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(_empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            xavier_uniform_(self.in_proj_weight)
        else:
            xavier_uniform_(self.q_proj_weight)
            xavier_uniform_(self.k_proj_weight)
            xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            constant_(self.in_proj_bias, 0.0)
            constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        # checkpoints from before kdim/vdim existed
        if "_qkv_same_embed_dim" not in state:
            state["_qkv_same_embed_dim"] = True
        self.__dict__.update(state)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        """``(attn_output, attn_weights)``; boolean masks are True where *masked out*."""
        is_batched = query.dim() == 3
        weights_wanted = need_weights
        if (not need_weights and (attn_mask is not None or key_padding_mask is not None)
                and self._fast_path_would_run(query, key, value, attn_mask, key_padding_mask)):
            need_weights = True  # for PyTorch's NaN rows, see the module docstring
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                           _none_or_dtype(attn_mask), "attn_mask",
                                           query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if self.batch_first and is_batched:
            # to (L, N, E), keeping which of query, key, value are the same tensor
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        attn_output, attn_output_weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=separate,
            q_proj_weight=self.q_proj_weight if separate else None,
            k_proj_weight=self.k_proj_weight if separate else None,
            v_proj_weight=self.v_proj_weight if separate else None,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if not weights_wanted:
            attn_output_weights = None
        if self.batch_first and is_batched:
            return attn_output.transpose(1, 0), attn_output_weights
        return attn_output, attn_output_weights

    def _fast_path_would_run(self, query, key, value, attn_mask, key_padding_mask):
        """Whether PyTorch would run this call on its fused self-attention kernel: batched
        self-attention (``query is key is value``) in eval mode with ``batch_first``, an even
        number of heads, packed biased projections, no bias_k/bias_v/zero_attn, boolean (or
        no) masks, and no gradient to record."""
        if any(m is not None and m.is_floating_point() for m in (attn_mask, key_padding_mask)):
            return False
        if (not _fastpath_enabled() or query.dim() != 3 or query is not key
                or key is not value or self.training or self.num_heads % 2 != 0
                or not self.batch_first or self.bias_k is not None or self.bias_v is not None
                or self.add_zero_attn or not self._qkv_same_embed_dim
                or self.in_proj_bias is None or query.dtype != self.in_proj_bias.dtype
                or query.dtype != self.in_proj_weight.dtype):
            return False
        return not (is_grad_enabled() and any(
            t is not None and t.requires_grad
            for t in (query, self.in_proj_weight, self.in_proj_bias, self.out_proj.weight,
                      self.out_proj.bias)))


def _fastpath_enabled():
    """``torch.backends.mha.get_fastpath_enabled()``: PyTorch's switch for its fused attention
    kernels (on by default); off, ember computes the general path's values throughout."""
    return bool(mha.get_fastpath_enabled())
