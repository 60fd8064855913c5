# Level 2 task: Conv3d(32->64, k3x3x3) -> GELU -> MaxPool3d(2) -> + learned bias.
# Sizes: x (8, 32, 32, 64, 64) -> output (8, 64, 15, 31, 31) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
in_channels = 32
out_channels = 64
depth = 32
height = 64
width = 64
kernel_size = 3
pool_kernel_size = 2
bias_shape = (out_channels, 1, 1, 1)


class Model(nn.Module):
    """Conv3d(32->64, k3x3x3), then GELU, MaxPool3d(2), + learned bias."""

    def __init__(self, in_channels, out_channels, kernel_size, pool_kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.pool = nn.MaxPool3d(pool_kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, x):
        x = self.conv(x)
        x = F.gelu(x)
        x = self.pool(x)
        x = x + self.bias
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool_kernel_size, bias_shape]
