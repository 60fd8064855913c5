# Level 2 task: Conv2d(3->64, k7x7, stride 2, pad 3) -> HardSwish -> MaxPool2d(3, s2, p1).
# Sizes: x (128, 3, 224, 224) -> output (128, 64, 56, 56) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_channels = 3
out_channels = 64
height = 224
width = 224
kernel_size = 7
stride = 2
padding = 3
pool_kernel_size = 3
pool_stride = 2
pool_padding = 1


class Model(nn.Module):
    """Conv2d(3->64, k7x7, stride 2, pad 3), then HardSwish, MaxPool2d(3, s2, p1)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, pool_kernel_size, pool_stride, pool_padding):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.pool = nn.MaxPool2d(pool_kernel_size, stride=pool_stride, padding=pool_padding)

    def forward(self, x):
        x = self.conv(x)
        x = F.hardswish(x)
        x = self.pool(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, pool_kernel_size, pool_stride, pool_padding]
