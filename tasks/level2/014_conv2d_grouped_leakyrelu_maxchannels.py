# Level 2 task: Conv2d(256->256, k3x3, pad 1, groups 8) -> LeakyReLU(0.2) -> max over channels.
# Sizes: x (32, 256, 64, 64) -> output (32, 1, 64, 64) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 256
out_channels = 256
height = 64
width = 64
kernel_size = 3
padding = 1
groups = 8
negative_slope = 0.2


class Model(nn.Module):
    """Conv2d(256->256, k3x3, pad 1, groups 8), then LeakyReLU(0.2), max over channels."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, groups, negative_slope):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, groups=groups)
        self.negative_slope = negative_slope

    def forward(self, x):
        x = self.conv(x)
        x = F.leaky_relu(x, negative_slope=self.negative_slope)
        x = torch.amax(x, dim=1, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, groups, negative_slope]
