# Level 2 task: Conv3d(32->64, k3x3x3, pad 1) -> - 0.5 -> Mish -> GroupNorm(16 groups) -> * 2.0 -> ReLU.
# Sizes: x (4, 32, 24, 64, 64) -> output (4, 64, 24, 64, 64) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
in_channels = 32
out_channels = 64
depth = 24
height = 64
width = 64
kernel_size = 3
padding = 1
subtract_value = 0.5
num_groups = 16
scale_factor = 2.0


class Model(nn.Module):
    """Conv3d(32->64, k3x3x3, pad 1), then - 0.5, Mish, GroupNorm(16 groups), * 2.0, ReLU."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, subtract_value, num_groups, scale_factor):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=padding)
        self.subtract_value = subtract_value
        self.gn = nn.GroupNorm(num_groups, out_channels)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.conv(x)
        x = x - self.subtract_value
        x = F.mish(x)
        x = self.gn(x)
        x = x * self.scale_factor
        x = torch.relu(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, subtract_value, num_groups, scale_factor]
