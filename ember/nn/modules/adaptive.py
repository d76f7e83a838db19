"""``AdaptiveLogSoftmaxWithLoss`` (Grave et al., "Efficient softmax approximation for GPUs"),
at PyTorch's path ``torch.nn.modules.adaptive``.

The frequent classes (below ``cutoffs[0]``) and one entry per rarer cluster share a ``head``
softmax; each cluster has its own smaller softmax (``tail[i]``: a projection to
``in_features // div_value ** (i + 1)`` features, then to the cluster's classes). A class's
log-probability is its head entry's, or its cluster's head entry plus its entry in the
cluster. Written with the same ordinary ops as PyTorch's module, so outputs, losses and
``grad_fn``s agree.
"""
from __future__ import annotations

from collections import namedtuple

from ...ops.reduction import argmax
from .. import functional as F
from ..module import Module
from .container import ModuleList, Sequential
from .linear import Linear

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Efficient softmax approximation for large vocabularies: ``forward(input, target)``
    returns ``(output, loss)``, the targets' log-probabilities and their negated mean;
    ``log_prob(input)`` every class's, ``predict(input)`` the most likely class."""

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        kw = dict(device=device, dtype=dtype)
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **kw),
                                        Linear(hidden, size, bias=False, **kw)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection:
                layer.reset_parameters()

    def forward(self, input_, target_):
        dims = target_.dim()
        if dims == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError("1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        elif dims == 0:
            if input_.dim() != 1:
                raise RuntimeError("0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = dims > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        n = target.size(0)
        output = input.new_zeros(n)
        head_index = target.new_empty(n)  # which head entry each row reads
        bounds = [0] + self.cutoffs
        seen = 0
        for i, (low, high) in enumerate(zip(bounds, bounds[1:])):
            in_range = (target >= low) & (target < high)
            rows = in_range.nonzero().squeeze()
            if rows.numel() == 0:
                continue
            if i == 0:  # a frequent class: its own head entry
                head_index.index_copy_(0, rows, target[in_range])
            else:  # a rarer class: its cluster's head entry, plus its log-prob in the cluster
                head_index.index_fill_(0, rows, self.shortlist_size + i - 1)
                cluster = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
                within = cluster.gather(1, (target[in_range] - low).unsqueeze(1))
                output.index_copy_(0, rows, within.squeeze(1))
            seen += rows.numel()
        if seen != n:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head = F.log_softmax(self.head(input), dim=1)
        output += head.gather(1, head_index.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input, head_output):
        out = input.new_empty((head_output.size(0), self.n_classes))
        head = F.log_softmax(head_output, dim=1)
        out[:, :self.shortlist_size] = head[:, :self.shortlist_size]
        for i, (start, stop) in enumerate(zip(self.cutoffs, self.cutoffs[1:])):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            out[:, start:stop] = cluster + head[:, self.shortlist_size + i].unsqueeze(1)
        return out

    def log_prob(self, input):
        """Every class's log-probability, ``(N, n_classes)``."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most likely class of each row (the full softmax only where the head picks a
        cluster)."""
        head_output = self.head(input)
        best = argmax(head_output, dim=1)
        rare = best >= self.shortlist_size
        if not rare.any():
            return best
        if rare.all():
            return argmax(self._full_log_prob(input, head_output), dim=1)
        best[rare] = argmax(self._full_log_prob(input[rare], head_output[rare]), dim=1)
        return best
