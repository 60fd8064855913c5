# Level 2 task: ConvTranspose2d(128->64, k4x4, stride 2, pad 1) -> GELU -> GroupNorm(8 groups).
# Sizes: x (32, 128, 64, 64) -> output (32, 64, 128, 128) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 128
out_channels = 64
height = 64
width = 64
kernel_size = 4
stride = 2
padding = 1
num_groups = 8


class Model(nn.Module):
    """ConvTranspose2d(128->64, k4x4, stride 2, pad 1), then GELU, GroupNorm(8 groups)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, num_groups):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.gn = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        x = self.conv(x)
        x = F.gelu(x)
        x = self.gn(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, num_groups]
