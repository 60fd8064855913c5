# Level 2 task: Conv2d(48->96, k3x3) -> Tanh -> * 2.5 -> + learned bias -> MaxPool2d(2).
# Sizes: x (16, 48, 192, 320) -> output (16, 96, 95, 159) (float32).
import torch
import torch.nn as nn

batch_size = 16
in_channels = 48
out_channels = 96
height = 192
width = 320
kernel_size = 3
scale_factor = 2.5
bias_shape = (out_channels, 1, 1)
pool_kernel_size = 2


class Model(nn.Module):
    """Conv2d(48->96, k3x3), then Tanh, * 2.5, + learned bias, MaxPool2d(2)."""

    def __init__(self, in_channels, out_channels, kernel_size, scale_factor, bias_shape, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scale_factor = scale_factor
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)
        self.pool = nn.MaxPool2d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = torch.tanh(x)
        x = x * self.scale_factor
        x = x + self.bias
        x = self.pool(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scale_factor, bias_shape, pool_kernel_size]
