# Level 2 task: ConvTranspose3d(128->64, k4x4x4, stride 2, pad 1) -> HardSwish -> MaxPool3d(2) -> * 16.0 -> logsumexp over channels.
# Sizes: x (16, 128, 8, 16, 16) -> output (16, 1, 8, 16, 16) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 128
out_channels = 64
depth = 8
height = 16
width = 16
kernel_size = 4
stride = 2
padding = 1
pool_kernel_size = 2
scale_factor = 16.0


class Model(nn.Module):
    """ConvTranspose3d(128->64, k4x4x4, stride 2, pad 1), then HardSwish, MaxPool3d(2), * 16.0, logsumexp over channels."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, pool_kernel_size, scale_factor):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.pool = nn.MaxPool3d(pool_kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.conv(x)
        x = F.hardswish(x)
        x = self.pool(x)
        x = x * self.scale_factor
        x = torch.logsumexp(x, dim=1, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, pool_kernel_size, scale_factor]
