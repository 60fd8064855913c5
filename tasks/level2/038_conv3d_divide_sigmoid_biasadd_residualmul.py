# Level 2 task: Conv3d(16->32, k3x3x3, pad 1) -> / 2.0 -> Sigmoid -> + learned bias -> * residual (main-op output).
# Sizes: x (4, 16, 32, 96, 96) -> output (4, 32, 32, 96, 96) (float32).
import torch
import torch.nn as nn

batch_size = 4
in_channels = 16
out_channels = 32
depth = 32
height = 96
width = 96
kernel_size = 3
padding = 1
divisor = 2.0
bias_shape = (out_channels, 1, 1, 1)


class Model(nn.Module):
    """Conv3d(16->32, k3x3x3, pad 1), then / 2.0, Sigmoid, + learned bias, * residual (main-op output)."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, divisor, bias_shape):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=padding)
        self.divisor = divisor
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, x):
        x = self.conv(x)
        residual = x
        x = x / self.divisor
        x = torch.sigmoid(x)
        x = x + self.bias
        x = x * residual
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, divisor, bias_shape]
