# Level 2 task: ConvTranspose2d(128->128, k4x4, stride 2, pad 1) -> - 0.25 -> SiLU -> MaxPool2d(2).
# Sizes: x (16, 128, 64, 64) -> output (16, 128, 64, 64) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 128
out_channels = 128
height = 64
width = 64
kernel_size = 4
stride = 2
padding = 1
subtract_value = 0.25
pool_kernel_size = 2


class Model(nn.Module):
    """ConvTranspose2d(128->128, k4x4, stride 2, pad 1), then - 0.25, SiLU, MaxPool2d(2)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, subtract_value, pool_kernel_size):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.subtract_value = subtract_value
        self.pool = nn.MaxPool2d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = x - self.subtract_value
        x = F.silu(x)
        x = self.pool(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, subtract_value, pool_kernel_size]
