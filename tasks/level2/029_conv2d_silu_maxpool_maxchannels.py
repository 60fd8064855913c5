# Level 2 task: Conv2d(48->96, k3x3, pad 1) -> SiLU -> MaxPool2d(2) -> max over channels.
# Sizes: x (16, 48, 160, 256) -> output (16, 1, 80, 128) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 48
out_channels = 96
height = 160
width = 256
kernel_size = 3
padding = 1
pool_kernel_size = 2


class Model(nn.Module):
    """Conv2d(48->96, k3x3, pad 1), then SiLU, MaxPool2d(2), max over channels."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.pool = nn.MaxPool2d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = F.silu(x)
        x = self.pool(x)
        x = torch.amax(x, dim=1, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, pool_kernel_size]
