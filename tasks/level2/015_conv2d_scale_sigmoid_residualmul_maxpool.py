# Level 2 task: Conv2d(64->256, k4x4, stride 2, pad 1) -> * 1.702 -> Sigmoid -> * residual (main-op output) -> MaxPool2d(2).
# Sizes: x (8, 64, 128, 128) -> output (8, 256, 32, 32) (float32).
import torch
import torch.nn as nn

batch_size = 8
in_channels = 64
out_channels = 256
height = 128
width = 128
kernel_size = 4
stride = 2
padding = 1
scale_factor = 1.702
pool_kernel_size = 2


class Model(nn.Module):
    """Conv2d(64->256, k4x4, stride 2, pad 1), then * 1.702, Sigmoid, * residual (main-op output), MaxPool2d(2)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, scale_factor, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.scale_factor = scale_factor
        self.pool = nn.MaxPool2d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        residual = x
        x = x * self.scale_factor
        x = torch.sigmoid(x)
        x = x * residual
        x = self.pool(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, scale_factor, pool_kernel_size]
