# Level 2 task: Conv2d(128->128, k3x3, pad 1) -> InstanceNorm2d -> LeakyReLU(0.1) -> AvgPool2d(2).
# Sizes: x (8, 128, 128, 128) -> output (8, 128, 64, 64) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
in_channels = 128
out_channels = 128
height = 128
width = 128
kernel_size = 3
padding = 1
negative_slope = 0.1
pool_kernel_size = 2


class Model(nn.Module):
    """Conv2d(128->128, k3x3, pad 1), then InstanceNorm2d, LeakyReLU(0.1), AvgPool2d(2)."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, negative_slope, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.norm = nn.InstanceNorm2d(out_channels)
        self.negative_slope = negative_slope
        self.pool = nn.AvgPool2d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = self.norm(x)
        x = F.leaky_relu(x, negative_slope=self.negative_slope)
        x = self.pool(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, negative_slope, pool_kernel_size]
