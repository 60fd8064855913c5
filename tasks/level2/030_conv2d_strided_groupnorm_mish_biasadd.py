# Level 2 task: Conv2d(64->128, k3x3, stride 2, pad 1) -> GroupNorm(16 groups) -> Mish -> + learned bias.
# Sizes: x (16, 64, 256, 256) -> output (16, 128, 128, 128) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 64
out_channels = 128
height = 256
width = 256
kernel_size = 3
stride = 2
padding = 1
num_groups = 16
bias_shape = (out_channels, 1, 1)


class Model(nn.Module):
    """Conv2d(64->128, k3x3, stride 2, pad 1), then GroupNorm(16 groups), Mish, + learned bias."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, num_groups, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.gn = nn.GroupNorm(num_groups, out_channels)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, x):
        x = self.conv(x)
        x = self.gn(x)
        x = F.mish(x)
        x = x + self.bias
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, num_groups, bias_shape]
