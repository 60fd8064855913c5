# Level 2 task: Conv2d(32->64, k3x3) -> Sigmoid -> + residual (main-op output) -> GroupNorm(8 groups).
# Sizes: x (64, 32, 128, 128) -> output (64, 64, 126, 126) (float32).
import torch
import torch.nn as nn

batch_size = 64
in_channels = 32
out_channels = 64
height = 128
width = 128
kernel_size = 3
num_groups = 8


class Model(nn.Module):
    """Conv2d(32->64, k3x3), then Sigmoid, + residual (main-op output), GroupNorm(8 groups)."""

    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.gn = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        x = self.conv(x)
        residual = x
        x = torch.sigmoid(x)
        x = x + residual
        x = self.gn(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups]
