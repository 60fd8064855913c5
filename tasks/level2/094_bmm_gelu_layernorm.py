# Level 2 task: torch.bmm -> GELU -> LayerNorm(n).
# Sizes: a (32, 1024, 512), b (32, 512, 1024) -> output (32, 1024, 1024) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
m = 1024
k = 512
n = 1024
normalized_shape = n


class Model(nn.Module):
    """torch.bmm, then GELU, LayerNorm(n)."""

    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, a, b):
        x = torch.bmm(a, b)
        x = F.gelu(x)
        x = self.ln(x)
        return x


def get_inputs():
    a = torch.randn(batch_size, m, k)
    b = torch.randn(batch_size, k, n)
    return [a, b]


def get_init_inputs():
    return [normalized_shape]
