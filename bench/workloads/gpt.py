"""``gpt``: one training step of two small character-level GPTs, float32, against PyTorch eager.

- ``gpt-nano``: minGPT's smallest model (3 layers, 3 heads, embeddings of 48) on a 65-character
  vocabulary, block 128, batch 16; attention written out as a masked softmax of q.k^T/sqrt(d),
  the tanh GELU written out, biases everywhere; AdamW(lr 5e-4, betas (0.9, 0.95), weight decay
  0.1 on the Linear weights only), gradients clipped to norm 1.
- ``nanogpt``: nanoGPT's Shakespeare-characters model in its CPU configuration (4 layers, 4
  heads, embeddings of 128, block 64, batch 12, no dropout), no biases,
  ``scaled_dot_product_attention(is_causal=True)``, exact GELU, the output layer tied to the
  token embedding; AdamW(lr 1e-3, betas (0.9, 0.99), weight decay 0.1 on every matrix),
  gradients clipped to norm 1.

Both models are the same code (``bench.workloads.lm.gpt``) built from ``ember`` or ``torch``.
Target: <= 1.5x PyTorch. Milliseconds per step.
"""
from __future__ import annotations

from bench.harness import Case, Target
from bench.workloads.lm import GPTConfig, Train, gpt, init_arrays, token_data, training_contender

MODELS = {
    "gpt-nano": (GPTConfig(vocab=65, block=128, n_layer=3, n_head=3, n_embd=48, gelu="tanh"),
                 16, Train(lr=5e-4, weight_decay=0.1, betas=(0.9, 0.95), clip=1.0,
                           decay_embeddings=False)),
    "nanogpt": (GPTConfig(vocab=65, block=64, n_layer=4, n_head=4, n_embd=128, bias=False,
                          gelu="exact", sdpa=True, tie=True),
                12, Train(lr=1e-3, weight_decay=0.1, betas=(0.9, 0.99), clip=1.0)),
}
QUICK = {"vocab": 11, "block": 8, "n_layer": 2, "n_head": 2, "n_embd": 8}


def cases(libs, quick):
    out = []
    for seed, (model, (cfg, batch, train)) in enumerate(MODELS.items(), start=1):
        if quick:
            cfg = GPTConfig(**{**vars(cfg), **QUICK})
            batch = 2
        make_model = gpt(cfg)
        arrays = init_arrays(seed, make_model(libs["ember"]))
        x, y = token_data(seed, batch, cfg.block, cfg.vocab)
        contenders = {name: (lambda lib=lib, make_model=make_model, arrays=arrays, x=x, y=y,
                             train=train: training_contender(lib, make_model, arrays, x, y,
                                                             train))
                      for name, lib in libs.items()}
        target = Target("torch", 1.5) if "torch" in libs else None
        variant = (f"{model}, {cfg.n_layer} layers, {cfg.n_head} heads, {cfg.n_embd} wide, "
                   f"batch {batch}x{cfg.block}")
        out.append(Case("gpt", variant, "ms/step", contenders, target))
    return out
