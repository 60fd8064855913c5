# Level 2 task: Conv2d(32->64, k3x3) -> AvgPool2d(2) -> Softmax over channels -> * 64.0.
# Sizes: x (128, 32, 64, 64) -> output (128, 64, 31, 31) (float32).
import torch
import torch.nn as nn

batch_size = 128
in_channels = 32
out_channels = 64
height = 64
width = 64
kernel_size = 3
pool_kernel_size = 2
scale_factor = 64.0


class Model(nn.Module):
    """Conv2d(32->64, k3x3), then AvgPool2d(2), Softmax over channels, * 64.0."""

    def __init__(self, in_channels, out_channels, kernel_size, pool_kernel_size, scale_factor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.pool = nn.AvgPool2d(pool_kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.conv(x)
        x = self.pool(x)
        x = torch.softmax(x, dim=1)
        x = x * self.scale_factor
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool_kernel_size, scale_factor]
