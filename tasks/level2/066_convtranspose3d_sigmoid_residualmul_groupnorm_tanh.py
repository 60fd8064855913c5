# Level 2 task: ConvTranspose3d(64->32, k3x3x3, stride 2, pad 1, out_pad 1) -> Sigmoid -> * residual (main-op output) -> GroupNorm(8 groups) -> Tanh.
# Sizes: x (2, 64, 16, 64, 64) -> output (2, 32, 32, 128, 128) (float32).
import torch
import torch.nn as nn

batch_size = 2
in_channels = 64
out_channels = 32
depth = 16
height = 64
width = 64
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
num_groups = 8


class Model(nn.Module):
    """ConvTranspose3d(64->32, k3x3x3, stride 2, pad 1, out_pad 1), then Sigmoid, * residual (main-op output), GroupNorm(8 groups), Tanh."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, num_groups):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding)
        self.gn = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        x = self.conv(x)
        residual = x
        x = torch.sigmoid(x)
        x = x * residual
        x = self.gn(x)
        x = torch.tanh(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, num_groups]
