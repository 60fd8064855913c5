# Level 2 task: Conv2d(96->96, k3x3, pad 1) -> + learned bias -> GELU -> AvgPool2d(2) -> * 2.0 -> clamp(-0.1, 0.6).
# Sizes: x (32, 96, 64, 64) -> output (32, 96, 32, 32) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 96
out_channels = 96
height = 64
width = 64
kernel_size = 3
padding = 1
bias_shape = (out_channels, 1, 1)
pool_kernel_size = 2
scale_factor = 2.0
clamp_min = -0.1
clamp_max = 0.6


class Model(nn.Module):
    """Conv2d(96->96, k3x3, pad 1), then + learned bias, GELU, AvgPool2d(2), * 2.0, clamp(-0.1, 0.6)."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, bias_shape, pool_kernel_size, scale_factor, clamp_min, clamp_max):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)
        self.pool = nn.AvgPool2d(pool_kernel_size)
        self.scale_factor = scale_factor
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        x = self.conv(x)
        x = x + self.bias
        x = F.gelu(x)
        x = self.pool(x)
        x = x * self.scale_factor
        x = torch.clamp(x, min=self.clamp_min, max=self.clamp_max)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, bias_shape, pool_kernel_size, scale_factor, clamp_min, clamp_max]
