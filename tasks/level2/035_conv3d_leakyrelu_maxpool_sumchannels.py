# Level 2 task: Conv3d(32->64, k3x3x3, pad 1) -> LeakyReLU(0.01) -> MaxPool3d(2) -> sum over channels.
# Sizes: x (2, 32, 32, 96, 96) -> output (2, 1, 16, 48, 48) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
in_channels = 32
out_channels = 64
depth = 32
height = 96
width = 96
kernel_size = 3
padding = 1
negative_slope = 0.01
pool_kernel_size = 2


class Model(nn.Module):
    """Conv3d(32->64, k3x3x3, pad 1), then LeakyReLU(0.01), MaxPool3d(2), sum over channels."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, negative_slope, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=padding)
        self.negative_slope = negative_slope
        self.pool = nn.MaxPool3d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = F.leaky_relu(x, negative_slope=self.negative_slope)
        x = self.pool(x)
        x = torch.sum(x, dim=1, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, negative_slope, pool_kernel_size]
