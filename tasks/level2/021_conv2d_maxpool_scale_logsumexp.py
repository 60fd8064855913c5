# Level 2 task: Conv2d(64->128, k3x3, pad 1) -> MaxPool2d(2) -> * 3.0 -> logsumexp over channels.
# Sizes: x (16, 64, 128, 128) -> output (16, 1, 64, 64) (float32).
import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
height = 128
width = 128
kernel_size = 3
padding = 1
pool_kernel_size = 2
scale_factor = 3.0


class Model(nn.Module):
    """Conv2d(64->128, k3x3, pad 1), then MaxPool2d(2), * 3.0, logsumexp over channels."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, pool_kernel_size, scale_factor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.pool = nn.MaxPool2d(pool_kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.conv(x)
        x = self.pool(x)
        x = x * self.scale_factor
        x = torch.logsumexp(x, dim=1, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, pool_kernel_size, scale_factor]
