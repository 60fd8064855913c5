# Level 2 task: Conv2d(64->128, k3x3, pad 2, dilation 2) -> GELU -> InstanceNorm2d -> + learned bias.
# Sizes: x (16, 64, 128, 128) -> output (16, 128, 128, 128) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 64
out_channels = 128
height = 128
width = 128
kernel_size = 3
padding = 2
dilation = 2
bias_shape = (out_channels, 1, 1)


class Model(nn.Module):
    """Conv2d(64->128, k3x3, pad 2, dilation 2), then GELU, InstanceNorm2d, + learned bias."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, dilation, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, dilation=dilation)
        self.norm = nn.InstanceNorm2d(out_channels)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, x):
        x = self.conv(x)
        x = F.gelu(x)
        x = self.norm(x)
        x = x + self.bias
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, dilation, bias_shape]
