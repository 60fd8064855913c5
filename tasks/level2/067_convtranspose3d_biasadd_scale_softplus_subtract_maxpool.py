# Level 2 task: ConvTranspose3d(32->32, k3x3x3, stride 2, pad 1, out_pad 1) -> + learned bias -> * 5.0 -> Softplus -> - 0.5 -> MaxPool3d(2).
# Sizes: x (8, 32, 16, 48, 48) -> output (8, 32, 16, 48, 48) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
in_channels = 32
out_channels = 32
depth = 16
height = 48
width = 48
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
bias_shape = (out_channels, 1, 1, 1)
scale_factor = 5.0
subtract_value = 0.5
pool_kernel_size = 2


class Model(nn.Module):
    """ConvTranspose3d(32->32, k3x3x3, stride 2, pad 1, out_pad 1), then + learned bias, * 5.0, Softplus, - 0.5, MaxPool3d(2)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape, scale_factor, subtract_value, pool_kernel_size):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)
        self.scale_factor = scale_factor
        self.subtract_value = subtract_value
        self.pool = nn.MaxPool3d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = x + self.bias
        x = x * self.scale_factor
        x = F.softplus(x)
        x = x - self.subtract_value
        x = self.pool(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape, scale_factor, subtract_value, pool_kernel_size]
