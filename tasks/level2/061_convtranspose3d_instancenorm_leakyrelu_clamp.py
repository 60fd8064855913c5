# Level 2 task: ConvTranspose3d(32->32, k3x3x3, pad 1) -> InstanceNorm3d -> LeakyReLU(0.2) -> clamp(-0.2, 1.5).
# Sizes: x (8, 32, 32, 32, 32) -> output (8, 32, 32, 32, 32) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
in_channels = 32
out_channels = 32
depth = 32
height = 32
width = 32
kernel_size = 3
padding = 1
negative_slope = 0.2
clamp_min = -0.2
clamp_max = 1.5


class Model(nn.Module):
    """ConvTranspose3d(32->32, k3x3x3, pad 1), then InstanceNorm3d, LeakyReLU(0.2), clamp(-0.2, 1.5)."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, negative_slope, clamp_min, clamp_max):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, padding=padding)
        self.norm = nn.InstanceNorm3d(out_channels)
        self.negative_slope = negative_slope
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        x = self.conv(x)
        x = self.norm(x)
        x = F.leaky_relu(x, negative_slope=self.negative_slope)
        x = torch.clamp(x, min=self.clamp_min, max=self.clamp_max)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, negative_slope, clamp_min, clamp_max]
