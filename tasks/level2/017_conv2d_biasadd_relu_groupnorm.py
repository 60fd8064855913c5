# Level 2 task: Conv2d(96->192, k3x3, pad 1) -> + learned bias -> ReLU -> GroupNorm(12 groups).
# Sizes: x (32, 96, 56, 56) -> output (32, 192, 56, 56) (float32).
import torch
import torch.nn as nn

batch_size = 32
in_channels = 96
out_channels = 192
height = 56
width = 56
kernel_size = 3
padding = 1
bias_shape = (out_channels, 1, 1)
num_groups = 12


class Model(nn.Module):
    """Conv2d(96->192, k3x3, pad 1), then + learned bias, ReLU, GroupNorm(12 groups)."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, bias_shape, num_groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)
        self.gn = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        x = self.conv(x)
        x = x + self.bias
        x = torch.relu(x)
        x = self.gn(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, bias_shape, num_groups]
