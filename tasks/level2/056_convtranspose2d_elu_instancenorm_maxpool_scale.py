# Level 2 task: ConvTranspose2d(128->128, k5x5, pad 2) -> ELU -> InstanceNorm2d -> MaxPool2d(2) -> * 0.5.
# Sizes: x (32, 128, 32, 32) -> output (32, 128, 16, 16) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 128
out_channels = 128
height = 32
width = 32
kernel_size = 5
padding = 2
pool_kernel_size = 2
scale_factor = 0.5


class Model(nn.Module):
    """ConvTranspose2d(128->128, k5x5, pad 2), then ELU, InstanceNorm2d, MaxPool2d(2), * 0.5."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, pool_kernel_size, scale_factor):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, padding=padding)
        self.norm = nn.InstanceNorm2d(out_channels)
        self.pool = nn.MaxPool2d(pool_kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.conv(x)
        x = F.elu(x)
        x = self.norm(x)
        x = self.pool(x)
        x = x * self.scale_factor
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, pool_kernel_size, scale_factor]
