# Level 2 task: Conv2d(32->64, k3x3, pad 1) -> GroupNorm(8 groups) -> GELU -> * 2.0.
# Sizes: x (16, 32, 256, 256) -> output (16, 64, 256, 256) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 32
out_channels = 64
height = 256
width = 256
kernel_size = 3
padding = 1
num_groups = 8
scale_factor = 2.0


class Model(nn.Module):
    """Conv2d(32->64, k3x3, pad 1), then GroupNorm(8 groups), GELU, * 2.0."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, num_groups, scale_factor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.gn = nn.GroupNorm(num_groups, out_channels)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.conv(x)
        x = self.gn(x)
        x = F.gelu(x)
        x = x * self.scale_factor
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, num_groups, scale_factor]
