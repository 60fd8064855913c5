# Level 2 task: Conv2d(64->64, k3x3, pad 1) -> SiLU -> GroupNorm(16 groups) -> + residual (main-op output).
# Sizes: x (32, 64, 112, 112) -> output (32, 64, 112, 112) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 64
out_channels = 64
height = 112
width = 112
kernel_size = 3
padding = 1
num_groups = 16


class Model(nn.Module):
    """Conv2d(64->64, k3x3, pad 1), then SiLU, GroupNorm(16 groups), + residual (main-op output)."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, num_groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.gn = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        x = self.conv(x)
        residual = x
        x = F.silu(x)
        x = self.gn(x)
        x = x + residual
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, num_groups]
