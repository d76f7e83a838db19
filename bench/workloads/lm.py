"""Pieces of the language-model workloads (``makemore``, ``gpt``): data, weights, the training
step, and a GPT written once for any module namespace.

Each model is defined once, as a function of ``lib`` (``ember`` or ``torch``), so both libraries
run the very same Python: the difference between ``import torch`` and ``import ember as torch``.
Its parameters are then overwritten, by name, with the same seeded NumPy draws in every library,
so the contenders start from identical weights and must agree on the loss and every gradient.

One training step is what a training loop repeats: forward, mean cross-entropy (targets of -1
are padding, ignored), ``backward()``, optional gradient clipping, ``AdamW.step()`` (weight decay
on the matrices only, in two parameter groups), ``zero_grad()``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bench.harness import Contender


def token_data(seed, batch, block, vocab, padded=False):
    """Inputs ``(batch, block)`` of token ids and their targets, the next token of each.

    With ``padded`` (makemore's words), each row is a word of random length: targets past its
    end are -1 (``ignore_index``) and inputs there are token 0.
    """
    rng = np.random.default_rng(seed)
    seq = rng.integers(1 if padded else 0, vocab, (batch, block + 1))
    x, y = seq[:, :-1].copy(), seq[:, 1:].copy()
    if padded:
        for row, length in enumerate(rng.integers(3, block + 1, batch)):
            x[row, length:] = 0
            y[row, length:] = -1
            y[row, length - 1] = 0  # the end-of-word token
    return x, y


def init_arrays(seed, model):
    """Seeded float32 draws for each of ``model``'s named parameters (any library's).

    Matrices and embeddings N(0, 0.02) (GPT-2's initialisation); a 1-D ``weight`` (a layer
    norm's gain) 1 + N(0, 0.1); other vectors N(0, 0.02), not zero so that every gradient path
    is exercised.
    """
    rng = np.random.default_rng(seed)
    arrays = {}
    for name, p in model.named_parameters():
        shape = tuple(p.shape)
        draw = rng.standard_normal(shape).astype(np.float32)
        if len(shape) == 1 and name.endswith("weight"):
            arrays[name] = 1 + 0.1 * draw
        else:
            arrays[name] = 0.02 * draw
    return arrays


def load_named(lib, model, arrays):
    with lib.no_grad():
        for name, p in model.named_parameters():
            p.copy_(lib.tensor(arrays[name]))


@dataclass
class Train:
    """The optimiser of a program: AdamW's settings and the clipping norm (``None``: none)."""

    lr: float = 5e-4
    weight_decay: float = 0.01
    betas: tuple = (0.9, 0.99)
    clip: float | None = None
    decay_embeddings: bool = True  # minGPT decays only Linear weights


def adamw(lib, model, train):
    """AdamW over two groups, as nanoGPT/minGPT set it up: decay on 2-D weights only."""
    decay, no_decay = [], []
    embeddings = {id(m.weight) for m in model.modules() if isinstance(m, lib.nn.Embedding)}
    for p in model.parameters():
        skip = p.dim() < 2 or (not train.decay_embeddings and id(p) in embeddings)
        (no_decay if skip else decay).append(p)
    groups = [{"params": decay, "weight_decay": train.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    return lib.optim.AdamW(groups, lr=train.lr, betas=train.betas, eps=1e-8)


def training_contender(lib, make_model, arrays, x0, y0, train, compiled=False):
    """One training step of ``make_model(lib)`` (returning ``(logits, loss)``) with AdamW;
    ``compiled``: the step and the check's forward and backward through ``lib.compile``."""
    model = make_model(lib)
    load_named(lib, model, arrays)
    opt = adamw(lib, model, train)
    x, y = lib.tensor(x0), lib.tensor(y0)
    clip = lib.nn.utils.clip_grad_norm_

    def step():
        _, loss = model(x, y)
        loss.backward()
        if train.clip is not None:
            clip(model.parameters(), train.clip)
        opt.step()
        opt.zero_grad(set_to_none=True)

    def loss_and_grads():
        opt.zero_grad(set_to_none=True)
        _, loss = model(x, y)
        loss.backward()
        return loss

    if compiled:
        step, loss_and_grads = lib.compile(step), lib.compile(loss_and_grads)

    def evaluate():
        loss = loss_and_grads()
        grads = {f"{name}.grad": p.grad.detach().numpy()
                 for name, p in model.named_parameters()}
        return {"loss": loss.item(), **grads}

    return Contender(step, evaluate)


def lm_loss(lib, logits, targets):
    """Mean cross-entropy over every position, padding (-1) ignored."""
    return lib.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                           targets.reshape(-1), ignore_index=-1)


# --------------------------------------------------------------------------- the GPT


@dataclass
class GPTConfig:
    """A decoder-only transformer, as nanoGPT/minGPT/makemore describe theirs.

    ``gelu``: ``"exact"`` (``nn.GELU()``, nanoGPT) or ``"tanh"`` (the tanh approximation written
    out in tensor ops, as minGPT and makemore do). ``sdpa``: attention by
    ``F.scaled_dot_product_attention(is_causal=True)`` (nanoGPT) rather than written out as a
    masked softmax of q.k^T/sqrt(d) (minGPT). ``tie``: the output layer shares the token
    embedding's weight (nanoGPT).
    """

    vocab: int
    block: int
    n_layer: int
    n_head: int
    n_embd: int
    bias: bool = True
    gelu: str = "exact"
    sdpa: bool = False
    tie: bool = False


def gpt(cfg):
    """``make_model(lib)`` for a GPT of ``cfg``: its modules built from ``lib.nn``."""
    def make_model(lib):
        return _gpt_classes(lib)(cfg)
    return make_model


def _gpt_classes(lib):
    nn, F = lib.nn, lib.nn.functional

    class TanhGELU(nn.Module):
        """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) in elementary ops."""

        def forward(self, x):
            inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * lib.pow(x, 3.0))
            return 0.5 * x * (1.0 + lib.tanh(inner))

    class CausalSelfAttention(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.n_head = cfg.n_head
            self.sdpa = cfg.sdpa
            self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
            self.proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)
            mask = lib.tril(lib.ones(cfg.block, cfg.block, dtype=lib.bool))
            self.register_buffer("mask", mask.view(1, 1, cfg.block, cfg.block))

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(C, dim=2)
            q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
                       for t in (q, k, v))
            if self.sdpa:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = att.masked_fill(~self.mask[:, :, :T, :T], float("-inf"))
                y = F.softmax(att, dim=-1) @ v
            return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))

    class Block(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.ln1 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
            self.attn = CausalSelfAttention(cfg)
            self.ln2 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
            self.mlp = nn.Sequential(nn.Linear(cfg.n_embd, 4 * cfg.n_embd, bias=cfg.bias),
                                     nn.GELU() if cfg.gelu == "exact" else TanhGELU(),
                                     nn.Linear(4 * cfg.n_embd, cfg.n_embd, bias=cfg.bias))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.wte = nn.Embedding(cfg.vocab, cfg.n_embd)
            self.wpe = nn.Embedding(cfg.block, cfg.n_embd)
            self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)])
            self.ln_f = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
            self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab, bias=False)
            if cfg.tie:
                self.lm_head.weight = self.wte.weight

        def forward(self, idx, targets):
            pos = lib.arange(idx.shape[1])
            x = self.wte(idx) + self.wpe(pos)
            for block in self.blocks:
                x = block(x)
            logits = self.lm_head(self.ln_f(x))
            return logits, lm_loss(lib, logits, targets)

    return GPT
