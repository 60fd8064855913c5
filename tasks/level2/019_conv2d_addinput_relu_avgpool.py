# Level 2 task: Conv2d(64->64, k3x3, pad 1) -> + input skip -> ReLU -> AvgPool2d(2).
# Sizes: x (16, 64, 128, 128), skip (16, 64, 128, 128) -> output (16, 64, 64, 64) (float32).
import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 64
height = 128
width = 128
kernel_size = 3
padding = 1
pool_kernel_size = 2


class Model(nn.Module):
    """Conv2d(64->64, k3x3, pad 1), then + input skip, ReLU, AvgPool2d(2)."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.pool = nn.AvgPool2d(pool_kernel_size)

    def forward(self, x, skip):
        x = self.conv(x)
        x = x + skip
        x = torch.relu(x)
        x = self.pool(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    skip = torch.randn(batch_size, out_channels, height, width)
    return [x, skip]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, pool_kernel_size]
