# Level 2 task: Conv3d(32->64, k3x3x3, pad 1) -> SiLU -> GroupNorm(8 groups) -> mean over depth.
# Sizes: x (8, 32, 16, 64, 64) -> output (8, 64, 1, 64, 64) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
in_channels = 32
out_channels = 64
depth = 16
height = 64
width = 64
kernel_size = 3
padding = 1
num_groups = 8


class Model(nn.Module):
    """Conv3d(32->64, k3x3x3, pad 1), then SiLU, GroupNorm(8 groups), mean over depth."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, num_groups):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=padding)
        self.gn = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        x = self.conv(x)
        x = F.silu(x)
        x = self.gn(x)
        x = torch.mean(x, dim=2, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, num_groups]
