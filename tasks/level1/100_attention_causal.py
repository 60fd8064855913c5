# Level 1 task: causal scaled dot-product attention (future keys masked), batch 16, heads 16, seq 1024, head
#   dim 64.
import math

import torch
import torch.nn as nn

batch_size = 16
num_heads = 16
seq_len = 1024
head_dim = 64


class Model(nn.Module):
    """Computes causal attention explicitly: position i attends to keys 0..i only."""

    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        n = q.size(-2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
        future = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    q = torch.randn(shape) * 3
    k = torch.randn(shape)
    v = torch.randn(shape)
    return [q, k, v]


def get_init_inputs():
    return []
