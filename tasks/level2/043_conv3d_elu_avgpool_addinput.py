# Level 2 task: Conv3d(32->32, k3x3x3, pad 1) -> ELU -> AvgPool3d(2) -> + input skip.
# Sizes: x (8, 32, 32, 64, 64), skip (8, 32, 16, 32, 32) -> output (8, 32, 16, 32, 32) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
in_channels = 32
out_channels = 32
depth = 32
height = 64
width = 64
kernel_size = 3
padding = 1
pool_kernel_size = 2


class Model(nn.Module):
    """Conv3d(32->32, k3x3x3, pad 1), then ELU, AvgPool3d(2), + input skip."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=padding)
        self.pool = nn.AvgPool3d(pool_kernel_size)

    def forward(self, x, skip):
        x = self.conv(x)
        x = F.elu(x)
        x = self.pool(x)
        x = x + skip
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    skip = torch.randn(batch_size, out_channels, depth // 2, height // 2, width // 2)
    return [x, skip]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, pool_kernel_size]
