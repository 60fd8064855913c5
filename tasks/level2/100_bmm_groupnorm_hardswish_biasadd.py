# Level 2 task: torch.bmm -> GroupNorm(32 groups) -> HardSwish -> + learned bias.
# Sizes: a (32, 1024, 512), b (32, 512, 1024) -> output (32, 1024, 1024) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
m = 1024
k = 512
n = 1024
num_groups = 32
bias_shape = (n,)


class Model(nn.Module):
    """torch.bmm, then GroupNorm(32 groups), HardSwish, + learned bias."""

    def __init__(self, num_groups, bias_shape):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, m)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, a, b):
        x = torch.bmm(a, b)
        x = self.gn(x)
        x = F.hardswish(x)
        x = x + self.bias
        return x


def get_inputs():
    a = torch.randn(batch_size, m, k)
    b = torch.randn(batch_size, k, n)
    return [a, b]


def get_init_inputs():
    return [num_groups, bias_shape]
