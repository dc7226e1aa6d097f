"""torch.nn.AdaptiveLogSoftmaxWithLoss: the efficient softmax of Grave et al. (2017) for large vocabularies --
a head over the frequent classes plus one token per cluster of rare classes, and a low-rank tail per cluster."""
from __future__ import annotations

import collections

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = collections.namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, div_value=4.0, head_bias=False)."""

    def __init__(self, in_features: int, n_classes: int, cutoffs, div_value: float = 4.0, head_bias: bool = False,
                 device=None, dtype=None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > (n_classes - 1) or \
                len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, dtype=dtype),
                                        Linear(hsz, osz, bias=False, dtype=dtype)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input, target):
        """(output, loss): the log-probability of each target and their negated mean."""
        targ_dim = target.dim()
        if targ_dim == 1:
            if input.size(0) != target.size(0):
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input.dim() != 2:
                raise RuntimeError("1D target tensor expects 2D input tensors, but found inputs with size",
                                   input.size())
        elif targ_dim == 0:
            if input.dim() != 1:
                raise RuntimeError("0D target tensor expects 1D input tensors, but found inputs with size",
                                   input.size())
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = targ_dim > 0
        x = input if batched else input.unsqueeze(0)
        t = target if batched else target.unsqueeze(0)
        n = t.size(0)
        output = x.new_zeros(n)
        gather = t.new_empty(n)
        used = 0
        for i, (low, high) in enumerate(zip([0] + self.cutoffs[:-1], self.cutoffs)):
            mask = (t >= low) & (t < high)
            rows = mask.nonzero().squeeze(1)
            if rows.numel() == 0:
                continue
            if i == 0:
                gather = gather.index_copy(0, rows, t[mask])
            else:
                rel = t[mask] - low
                logp = F.log_softmax(self.tail[i - 1](x.index_select(0, rows)), dim=1)
                gather = gather.index_fill(0, rows, self.shortlist_size + i - 1)
                output = output.index_copy(0, rows, logp.gather(1, rel.unsqueeze(1)).squeeze(1))
            used += rows.numel()
        if used != n:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{t.min().item()}, {t.max().item()}] were found. ")
        head_logp = F.log_softmax(self.head(x), dim=1)
        output = output + head_logp.gather(1, gather.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, x, head_output):
        head_logp = F.log_softmax(head_output, dim=1)
        parts = [head_logp[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logp = F.log_softmax(self.tail[i](x), dim=1)
            parts.append(cluster_logp + head_logp[:, self.shortlist_size + i].unsqueeze(1))
        return _fg.cat(parts, 1)

    def log_prob(self, input):
        """The log-probabilities of every class, (N, n_classes) (or (n_classes,))."""
        x = input if input.dim() == 2 else input.unsqueeze(0)
        out = self._full_log_prob(x, self.head(x))
        return out if input.dim() == 2 else out.squeeze(0)

    def predict(self, input):
        """The most likely class of each input (argmax of log_prob)."""
        return self.log_prob(input).argmax(-1)
