# Level 2 task: ConvTranspose3d(64->32, k3x3x3, stride 2, pad 1, out_pad 1) -> * 4.0 -> + learned bias -> Sigmoid -> MaxPool3d(2).
# Sizes: x (8, 64, 16, 32, 32) -> output (8, 32, 16, 32, 32) (float32).
import torch
import torch.nn as nn

batch_size = 8
in_channels = 64
out_channels = 32
depth = 16
height = 32
width = 32
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
scale_factor = 4.0
bias_shape = (out_channels, 1, 1, 1)
pool_kernel_size = 2


class Model(nn.Module):
    """ConvTranspose3d(64->32, k3x3x3, stride 2, pad 1, out_pad 1), then * 4.0, + learned bias, Sigmoid, MaxPool3d(2)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, scale_factor, bias_shape, pool_kernel_size):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding)
        self.scale_factor = scale_factor
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)
        self.pool = nn.MaxPool3d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = x * self.scale_factor
        x = x + self.bias
        x = torch.sigmoid(x)
        x = self.pool(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, scale_factor, bias_shape, pool_kernel_size]
