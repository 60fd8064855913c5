# Level 2 task: Conv2d(64->64, k5x5, pad 2) -> Mish -> Tanh.
# Sizes: x (16, 64, 128, 128) -> output (16, 64, 128, 128) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 64
out_channels = 64
height = 128
width = 128
kernel_size = 5
padding = 2


class Model(nn.Module):
    """Conv2d(64->64, k5x5, pad 2), then Mish, Tanh."""

    def __init__(self, in_channels, out_channels, kernel_size, padding):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)

    def forward(self, x):
        x = self.conv(x)
        x = F.mish(x)
        x = torch.tanh(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding]
