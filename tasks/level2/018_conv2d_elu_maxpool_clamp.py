# Level 2 task: Conv2d(16->32, k3x3, pad 1) -> ELU -> MaxPool2d(2) -> clamp(0.0, 1.0).
# Sizes: x (128, 16, 128, 128) -> output (128, 32, 64, 64) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_channels = 16
out_channels = 32
height = 128
width = 128
kernel_size = 3
padding = 1
pool_kernel_size = 2
clamp_min = 0.0
clamp_max = 1.0


class Model(nn.Module):
    """Conv2d(16->32, k3x3, pad 1), then ELU, MaxPool2d(2), clamp(0.0, 1.0)."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, pool_kernel_size, clamp_min, clamp_max):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.pool = nn.MaxPool2d(pool_kernel_size)
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        x = self.conv(x)
        x = F.elu(x)
        x = self.pool(x)
        x = torch.clamp(x, min=self.clamp_min, max=self.clamp_max)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, pool_kernel_size, clamp_min, clamp_max]
