# Level 2 task: torch.bmm -> Mish -> logsumexp over last dim.
# Sizes: a (64, 1024, 256), b (64, 256, 512) -> output (64, 1024, 1) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
m = 1024
k = 256
n = 512


class Model(nn.Module):
    """torch.bmm, then Mish, logsumexp over last dim."""

    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        x = torch.bmm(a, b)
        x = F.mish(x)
        x = torch.logsumexp(x, dim=-1, keepdim=True)
        return x


def get_inputs():
    a = torch.randn(batch_size, m, k)
    b = torch.randn(batch_size, k, n)
    return [a, b]


def get_init_inputs():
    return []
