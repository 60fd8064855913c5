# Level 2 task: ConvTranspose2d(64->64, k3x3, stride 2, pad 1, out_pad 1) -> LeakyReLU(0.05) -> MaxPool2d(2) -> * 0.5.
# Sizes: x (16, 64, 128, 128) -> output (16, 64, 128, 128) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 64
out_channels = 64
height = 128
width = 128
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
negative_slope = 0.05
pool_kernel_size = 2
scale_factor = 0.5


class Model(nn.Module):
    """ConvTranspose2d(64->64, k3x3, stride 2, pad 1, out_pad 1), then LeakyReLU(0.05), MaxPool2d(2), * 0.5."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, negative_slope, pool_kernel_size, scale_factor):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding)
        self.negative_slope = negative_slope
        self.pool = nn.MaxPool2d(pool_kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.conv(x)
        x = F.leaky_relu(x, negative_slope=self.negative_slope)
        x = self.pool(x)
        x = x * self.scale_factor
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, negative_slope, pool_kernel_size, scale_factor]
