# Level 2 task: Conv2d(64->64, k3x3, pad 1) -> GELU -> AvgPool2d(2) -> * 4.0 -> logsumexp over channels.
# Sizes: x (64, 64, 96, 96) -> output (64, 1, 48, 48) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
in_channels = 64
out_channels = 64
height = 96
width = 96
kernel_size = 3
padding = 1
pool_kernel_size = 2
scale_factor = 4.0


class Model(nn.Module):
    """Conv2d(64->64, k3x3, pad 1), then GELU, AvgPool2d(2), * 4.0, logsumexp over channels."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, pool_kernel_size, scale_factor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.pool = nn.AvgPool2d(pool_kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.conv(x)
        x = F.gelu(x)
        x = self.pool(x)
        x = x * self.scale_factor
        x = torch.logsumexp(x, dim=1, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, pool_kernel_size, scale_factor]
