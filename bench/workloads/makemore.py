"""``makemore``: one AdamW training step of each model family of a character-level name
generator shaped like Karpathy's makemore, in float32 (written here from its description).

Words of up to 15 characters over a 27-token alphabet (block 16), batch 32, embeddings of 64
and hidden layers of 64, AdamW(lr 5e-4, weight decay 0.01, betas (0.9, 0.99)); a target past a
word's end is -1, ignored by the cross-entropy. The models:

- ``bigram``: a 27x27 table of logits looked up per token (an ``Embedding``);
- ``mlp``: the embeddings of the 3 previous characters concatenated, a tanh layer, logits;
- ``rnn``/``gru``: a vanilla RNN cell / a GRU cell written in ``Linear`` layers, unrolled over
  the 16 positions from a learned start state;
- ``bow``: token + position embeddings, a causal bag of words (each position the uniform
  average of those before it, by a masked softmax) and a tanh MLP, both residual;
- ``transformer``: a 4-layer, 4-head GPT with the tanh GELU written out.

PyTorch is the reference (target: <= 1.0x for the small bigram and MLP, <= 1.5x for the rest);
the bigram and MLP also have a NumPy floor written by hand. Milliseconds per step.
"""
from __future__ import annotations

import numpy as np

from bench.harness import Case, Contender, Target
from bench.workloads.lm import (
    GPTConfig,
    Train,
    gpt,
    init_arrays,
    lm_loss,
    token_data,
    training_contender,
)

FULL = {"vocab": 27, "block": 16, "batch": 32, "n_embd": 64, "n_embd2": 64, "n_layer": 4,
        "n_head": 4, "context": 3}
QUICK = {"vocab": 7, "block": 5, "batch": 3, "n_embd": 8, "n_embd2": 6, "n_layer": 2,
         "n_head": 2, "context": 3}
TRAIN = Train(lr=5e-4, weight_decay=0.01, betas=(0.9, 0.99))
MODELS = ("bigram", "mlp", "rnn", "gru", "bow", "transformer")
TARGETS = {"bigram": 1.0, "mlp": 1.0}  # the others: 1.5


def bigram(size):
    def make_model(lib):
        class Bigram(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.table = lib.nn.Embedding(size["vocab"], size["vocab"])

            def forward(self, idx, targets):
                logits = self.table(idx)
                return logits, lm_loss(lib, logits, targets)

        return Bigram()
    return make_model


def mlp(size):
    """Each position sees the ``context`` previous tokens (token ``vocab`` before the start)."""
    vocab, k = size["vocab"], size["context"]

    def make_model(lib):
        nn = lib.nn

        class MLP(nn.Module):
            def __init__(self):
                super().__init__()
                self.wte = nn.Embedding(vocab + 1, size["n_embd"])
                self.hidden = nn.Linear(k * size["n_embd"], size["n_embd2"])
                self.out = nn.Linear(size["n_embd2"], vocab)

            def forward(self, idx, targets):
                B, T = idx.shape
                pad = lib.full((B, k), vocab, dtype=idx.dtype)
                padded = lib.cat([pad, idx], dim=1)
                # context j of position t is token t - k + j (j = 0 the farthest)
                ctx = lib.stack([padded[:, j:j + T] for j in range(1, k + 1)], dim=2)
                emb = self.wte(ctx).view(B, T, -1)
                logits = self.out(lib.tanh(self.hidden(emb)))
                return logits, lm_loss(lib, logits, targets)

        return MLP()
    return make_model


def recurrent(size, cell):
    """An RNN (``cell="rnn"``) or GRU (``"gru"``) language model, cells as ``Linear`` layers."""
    n_embd, n_hidden = size["n_embd"], size["n_embd2"]

    def make_model(lib):
        nn = lib.nn

        class RNNCell(nn.Module):
            def __init__(self):
                super().__init__()
                self.xh_to_h = nn.Linear(n_embd + n_hidden, n_hidden)

            def forward(self, x, h):
                return lib.tanh(self.xh_to_h(lib.cat([x, h], dim=1)))

        class GRUCell(nn.Module):
            def __init__(self):
                super().__init__()
                self.update = nn.Linear(n_embd + n_hidden, n_hidden)
                self.reset = nn.Linear(n_embd + n_hidden, n_hidden)
                self.candidate = nn.Linear(n_embd + n_hidden, n_hidden)

            def forward(self, x, h):
                xh = lib.cat([x, h], dim=1)
                z = lib.sigmoid(self.update(xh))
                r = lib.sigmoid(self.reset(xh))
                hbar = lib.tanh(self.candidate(lib.cat([x, r * h], dim=1)))
                return (1 - z) * h + z * hbar

        class RNNLM(nn.Module):
            def __init__(self):
                super().__init__()
                self.start = nn.Parameter(lib.zeros(1, n_hidden))
                self.wte = nn.Embedding(size["vocab"], n_embd)
                self.cell = RNNCell() if cell == "rnn" else GRUCell()
                self.lm_head = nn.Linear(n_hidden, size["vocab"])

            def forward(self, idx, targets):
                B, T = idx.shape
                emb = self.wte(idx)
                h = self.start.expand(B, -1)
                hiddens = []
                for t in range(T):
                    h = self.cell(emb[:, t, :], h)
                    hiddens.append(h)
                logits = self.lm_head(lib.stack(hiddens, dim=1))
                return logits, lm_loss(lib, logits, targets)

        return RNNLM()
    return make_model


def bag_of_words(size):
    n_embd, block = size["n_embd"], size["block"]

    def make_model(lib):
        nn, F = lib.nn, lib.nn.functional

        class BoWLM(nn.Module):
            def __init__(self):
                super().__init__()
                self.wte = nn.Embedding(size["vocab"], n_embd)
                self.wpe = nn.Embedding(block, n_embd)
                self.mix = nn.Linear(n_embd, n_embd)
                self.mlp = nn.Sequential(nn.Linear(n_embd, size["n_embd2"]), nn.Tanh(),
                                         nn.Linear(size["n_embd2"], n_embd))
                self.lm_head = nn.Linear(n_embd, size["vocab"])
                self.register_buffer("mask", lib.tril(lib.ones(block, block)).view(1, block,
                                                                                     block))

            def forward(self, idx, targets):
                B, T = idx.shape
                x = self.wte(idx) + self.wpe(lib.arange(T))
                weights = lib.zeros(B, T, T).masked_fill(self.mask[:, :T, :T] == 0,
                                                         float("-inf"))
                x = x + self.mix(F.softmax(weights, dim=-1) @ x)  # causal averages
                x = x + self.mlp(x)
                logits = self.lm_head(x)
                return logits, lm_loss(lib, logits, targets)

        return BoWLM()
    return make_model


def transformer(size):
    return gpt(GPTConfig(vocab=size["vocab"], block=size["block"], n_layer=size["n_layer"],
                         n_head=size["n_head"], n_embd=size["n_embd"], gelu="tanh"))


BUILDERS = {"bigram": bigram, "mlp": mlp, "rnn": lambda s: recurrent(s, "rnn"),
            "gru": lambda s: recurrent(s, "gru"), "bow": bag_of_words,
            "transformer": transformer}


# --------------------------------------------------------------------------- the NumPy floor


class NumpyAdamW:
    """AdamW by hand, in place, over a list of arrays (decay: which ones get weight decay)."""

    def __init__(self, params, decay, train):
        self.params, self.decay, self.train = params, decay, train
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, grads):
        tr = self.train
        b1, b2 = tr.betas
        self.t += 1
        step_size = tr.lr / (1 - b1 ** self.t)
        root_bias = np.sqrt(1 - b2 ** self.t)
        for p, g, m, v, decay in zip(self.params, grads, self.m, self.v, self.decay):
            if decay:
                p *= 1 - tr.lr * tr.weight_decay
            m *= b1
            m += (1 - b1) * g
            v *= b2
            g *= g
            g *= 1 - b2
            v += g
            denom = np.sqrt(v)
            denom /= root_bias
            denom += 1e-8
            np.divide(m, denom, out=denom)
            denom *= step_size
            p -= denom


def numpy_ce(logits, y):
    """Mean cross-entropy over the rows whose target is not -1, and d loss / d logits."""
    keep = y >= 0
    n = keep.sum()
    shifted = logits - logits.max(axis=1, keepdims=True)
    probs = np.exp(shifted)
    total = probs.sum(axis=1, keepdims=True)
    rows = np.nonzero(keep)[0]
    loss = (np.log(total[rows, 0]) - shifted[rows, y[rows]]).sum() / n
    probs /= total
    probs[rows, y[rows]] -= 1
    probs[~keep] = 0
    probs /= n
    return loss, probs


def numpy_contender(model, arrays, x, y):
    """The bigram or the MLP by hand: forward, cross-entropy, backward, AdamW."""
    names = list(arrays)
    params = [arrays[k].copy() for k in names]
    opt = NumpyAdamW(params, [p.ndim >= 2 for p in params], TRAIN)
    yf = y.reshape(-1)
    if model == "bigram":
        idx = x.reshape(-1)

        def loss_and_grads():
            (table,) = params
            loss, dlogits = numpy_ce(table[idx], yf)
            dtable = np.zeros_like(table)
            np.add.at(dtable, idx, dlogits)
            return loss, [dtable]
    else:
        B, T = x.shape
        vocab = params[0].shape[0] - 1
        k = params[1].shape[1] // params[0].shape[1]
        padded = np.concatenate([np.full((B, k), vocab), x], axis=1)
        ctx = np.stack([padded[:, j:j + T] for j in range(1, k + 1)], axis=2).reshape(-1)

        def loss_and_grads():
            wte, w1, b1, w2, b2 = params
            emb = wte[ctx].reshape(B * T, -1)
            h = np.tanh(emb @ w1.T + b1)
            loss, dlogits = numpy_ce(h @ w2.T + b2, yf)
            dw2, db2 = dlogits.T @ h, dlogits.sum(axis=0)
            dpre = dlogits @ w2
            dpre *= 1 - h * h
            dw1, db1 = dpre.T @ emb, dpre.sum(axis=0)
            dwte = np.zeros_like(wte)
            np.add.at(dwte, ctx, (dpre @ w1).reshape(len(ctx), -1))
            return loss, [dwte, dw1, db1, dw2, db2]

    def step():
        opt.step(loss_and_grads()[1])

    def evaluate():
        loss, grads = loss_and_grads()
        return {"loss": loss, **{f"{k}.grad": g for k, g in zip(names, grads)}}

    return Contender(step, evaluate)


def cases(libs, quick):
    size = QUICK if quick else FULL
    x, y = token_data(0, size["batch"], size["block"], size["vocab"], padded=True)
    out = []
    for seed, model in enumerate(MODELS, start=1):
        make_model = BUILDERS[model](size)
        arrays = init_arrays(seed, make_model(libs["ember"]))
        contenders = {name: (lambda lib=lib, make_model=make_model, arrays=arrays:
                             training_contender(lib, make_model, arrays, x, y, TRAIN))
                      for name, lib in libs.items()}
        if model in ("bigram", "mlp"):
            contenders["numpy"] = lambda model=model, arrays=arrays: numpy_contender(
                model, arrays, x, y)
        target = Target("torch", TARGETS.get(model, 1.5)) if "torch" in libs else None
        variant = f"{model}, batch {size['batch']}x{size['block']}"
        out.append(Case("makemore", variant, "ms/step", contenders, target))
    return out
