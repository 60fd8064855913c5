# Level 2 task: torch.bmm -> * 0.25 -> Softmax over last dim -> max over last dim.
# Sizes: a (16, 2048, 128), b (16, 128, 2048) -> output (16, 2048, 1) (float32).
import torch
import torch.nn as nn

batch_size = 16
m = 2048
k = 128
n = 2048
scale_factor = 0.25


class Model(nn.Module):
    """torch.bmm, then * 0.25, Softmax over last dim, max over last dim."""

    def __init__(self, scale_factor):
        super().__init__()
        self.scale_factor = scale_factor

    def forward(self, a, b):
        x = torch.bmm(a, b)
        x = x * self.scale_factor
        x = torch.softmax(x, dim=-1)
        x = torch.amax(x, dim=-1, keepdim=True)
        return x


def get_inputs():
    a = torch.randn(batch_size, m, k)
    b = torch.randn(batch_size, k, n)
    return [a, b]


def get_init_inputs():
    return [scale_factor]
