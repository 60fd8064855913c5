# Level 2 task: Conv3d(64->64, k1x3x3, pad (0, 1, 1)) -> Softplus -> InstanceNorm3d.
# Sizes: x (8, 64, 16, 64, 64) -> output (8, 64, 16, 64, 64) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
in_channels = 64
out_channels = 64
depth = 16
height = 64
width = 64
kernel_size = (1, 3, 3)
padding = (0, 1, 1)


class Model(nn.Module):
    """Conv3d(64->64, k1x3x3, pad (0, 1, 1)), then Softplus, InstanceNorm3d."""

    def __init__(self, in_channels, out_channels, kernel_size, padding):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=padding)
        self.norm = nn.InstanceNorm3d(out_channels)

    def forward(self, x):
        x = self.conv(x)
        x = F.softplus(x)
        x = self.norm(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding]
