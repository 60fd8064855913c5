# Level 2 task: torch.bmm -> / 16.0 -> Sigmoid -> * residual (main-op output) -> sum over dim 1.
# Sizes: a (64, 1024, 256), b (64, 256, 1024) -> output (64, 1, 1024) (float32).
import torch
import torch.nn as nn

batch_size = 64
m = 1024
k = 256
n = 1024
divisor = 16.0


class Model(nn.Module):
    """torch.bmm, then / 16.0, Sigmoid, * residual (main-op output), sum over dim 1."""

    def __init__(self, divisor):
        super().__init__()
        self.divisor = divisor

    def forward(self, a, b):
        x = torch.bmm(a, b)
        residual = x
        x = x / self.divisor
        x = torch.sigmoid(x)
        x = x * residual
        x = torch.sum(x, dim=1, keepdim=True)
        return x


def get_inputs():
    a = torch.randn(batch_size, m, k)
    b = torch.randn(batch_size, k, n)
    return [a, b]


def get_init_inputs():
    return [divisor]
