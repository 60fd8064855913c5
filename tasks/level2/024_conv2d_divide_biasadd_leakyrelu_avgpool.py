# Level 2 task: Conv2d(128->128, k3x3, pad 1) -> / 2.0 -> + learned bias -> LeakyReLU(0.01) -> AvgPool2d(3).
# Sizes: x (16, 128, 96, 96) -> output (16, 128, 32, 32) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 128
out_channels = 128
height = 96
width = 96
kernel_size = 3
padding = 1
divisor = 2.0
bias_shape = (out_channels, 1, 1)
negative_slope = 0.01
pool_kernel_size = 3


class Model(nn.Module):
    """Conv2d(128->128, k3x3, pad 1), then / 2.0, + learned bias, LeakyReLU(0.01), AvgPool2d(3)."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, divisor, bias_shape, negative_slope, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.divisor = divisor
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)
        self.negative_slope = negative_slope
        self.pool = nn.AvgPool2d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = x / self.divisor
        x = x + self.bias
        x = F.leaky_relu(x, negative_slope=self.negative_slope)
        x = self.pool(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, divisor, bias_shape, negative_slope, pool_kernel_size]
