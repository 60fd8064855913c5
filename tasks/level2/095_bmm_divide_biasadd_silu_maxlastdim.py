# Level 2 task: torch.bmm -> / 16.0 -> + learned bias -> SiLU -> max over last dim.
# Sizes: a (128, 512, 512), b (128, 512, 512) -> output (128, 512, 1) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
m = 512
k = 512
n = 512
divisor = 16.0
bias_shape = (n,)


class Model(nn.Module):
    """torch.bmm, then / 16.0, + learned bias, SiLU, max over last dim."""

    def __init__(self, divisor, bias_shape):
        super().__init__()
        self.divisor = divisor
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, a, b):
        x = torch.bmm(a, b)
        x = x / self.divisor
        x = x + self.bias
        x = F.silu(x)
        x = torch.amax(x, dim=-1, keepdim=True)
        return x


def get_inputs():
    a = torch.randn(batch_size, m, k)
    b = torch.randn(batch_size, k, n)
    return [a, b]


def get_init_inputs():
    return [divisor, bias_shape]
