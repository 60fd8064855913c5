# Level 2 task: ConvTranspose3d(32->32, k3x3x3, stride 2, pad 1, out_pad 1) -> GroupNorm(8 groups) -> GELU -> AvgPool3d(2).
# Sizes: x (4, 32, 16, 64, 64) -> output (4, 32, 16, 64, 64) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
in_channels = 32
out_channels = 32
depth = 16
height = 64
width = 64
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
num_groups = 8
pool_kernel_size = 2


class Model(nn.Module):
    """ConvTranspose3d(32->32, k3x3x3, stride 2, pad 1, out_pad 1), then GroupNorm(8 groups), GELU, AvgPool3d(2)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, num_groups, pool_kernel_size):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding)
        self.gn = nn.GroupNorm(num_groups, out_channels)
        self.pool = nn.AvgPool3d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = self.gn(x)
        x = F.gelu(x)
        x = self.pool(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, num_groups, pool_kernel_size]
