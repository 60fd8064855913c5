# Level 2 task: torch.bmm -> InstanceNorm1d -> GELU.
# Sizes: a (32, 512, 1024), b (32, 1024, 1024) -> output (32, 512, 1024) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
m = 512
k = 1024
n = 1024


class Model(nn.Module):
    """torch.bmm, then InstanceNorm1d, GELU."""

    def __init__(self):
        super().__init__()
        self.norm = nn.InstanceNorm1d(m)

    def forward(self, a, b):
        x = torch.bmm(a, b)
        x = self.norm(x)
        x = F.gelu(x)
        return x


def get_inputs():
    a = torch.randn(batch_size, m, k)
    b = torch.randn(batch_size, k, n)
    return [a, b]


def get_init_inputs():
    return []
