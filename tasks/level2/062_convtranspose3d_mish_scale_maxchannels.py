# Level 2 task: ConvTranspose3d(64->32, k4x4x4, stride 2, pad 1) -> Mish -> * 2.0 -> max over channels.
# Sizes: x (8, 64, 16, 32, 32) -> output (8, 1, 32, 64, 64) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
in_channels = 64
out_channels = 32
depth = 16
height = 32
width = 32
kernel_size = 4
stride = 2
padding = 1
scale_factor = 2.0


class Model(nn.Module):
    """ConvTranspose3d(64->32, k4x4x4, stride 2, pad 1), then Mish, * 2.0, max over channels."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, scale_factor):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.conv(x)
        x = F.mish(x)
        x = x * self.scale_factor
        x = torch.amax(x, dim=1, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, scale_factor]
