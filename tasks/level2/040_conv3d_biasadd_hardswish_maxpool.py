# Level 2 task: Conv3d(16->32, k3x3x3) -> + learned bias -> HardSwish -> MaxPool3d(2).
# Sizes: x (16, 16, 32, 64, 64) -> output (16, 32, 15, 31, 31) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 16
out_channels = 32
depth = 32
height = 64
width = 64
kernel_size = 3
bias_shape = (out_channels, 1, 1, 1)
pool_kernel_size = 2


class Model(nn.Module):
    """Conv3d(16->32, k3x3x3), then + learned bias, HardSwish, MaxPool3d(2)."""

    def __init__(self, in_channels, out_channels, kernel_size, bias_shape, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)
        self.pool = nn.MaxPool3d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = x + self.bias
        x = F.hardswish(x)
        x = self.pool(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape, pool_kernel_size]
