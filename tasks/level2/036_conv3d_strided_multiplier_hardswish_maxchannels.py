# Level 2 task: Conv3d(32->64, k3x3x3, stride 2, pad 1) -> * learned multiplier -> HardSwish -> max over channels.
# Sizes: x (8, 32, 32, 64, 64) -> output (8, 1, 16, 32, 32) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
in_channels = 32
out_channels = 64
depth = 32
height = 64
width = 64
kernel_size = 3
stride = 2
padding = 1
multiplier_shape = (out_channels, 1, 1, 1)


class Model(nn.Module):
    """Conv3d(32->64, k3x3x3, stride 2, pad 1), then * learned multiplier, HardSwish, max over channels."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, multiplier_shape):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.multiplier = nn.Parameter(1.0 + 0.1 * torch.randn(multiplier_shape))

    def forward(self, x):
        x = self.conv(x)
        x = x * self.multiplier
        x = F.hardswish(x)
        x = torch.amax(x, dim=1, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, multiplier_shape]
