# Level 2 task: Conv2d(256->256, k3x3, pad 1) -> LogSoftmax over channels -> MaxPool2d(2).
# Sizes: x (32, 256, 32, 32) -> output (32, 256, 16, 16) (float32).
import torch
import torch.nn as nn

batch_size = 32
in_channels = 256
out_channels = 256
height = 32
width = 32
kernel_size = 3
padding = 1
pool_kernel_size = 2


class Model(nn.Module):
    """Conv2d(256->256, k3x3, pad 1), then LogSoftmax over channels, MaxPool2d(2)."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.pool = nn.MaxPool2d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = torch.log_softmax(x, dim=1)
        x = self.pool(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, pool_kernel_size]
