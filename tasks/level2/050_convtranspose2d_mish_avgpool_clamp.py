# Level 2 task: ConvTranspose2d(256->128, k2x2, stride 2) -> Mish -> AvgPool2d(2) -> clamp(-0.2, 0.4).
# Sizes: x (64, 256, 32, 32) -> output (64, 128, 32, 32) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
in_channels = 256
out_channels = 128
height = 32
width = 32
kernel_size = 2
stride = 2
pool_kernel_size = 2
clamp_min = -0.2
clamp_max = 0.4


class Model(nn.Module):
    """ConvTranspose2d(256->128, k2x2, stride 2), then Mish, AvgPool2d(2), clamp(-0.2, 0.4)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, pool_kernel_size, clamp_min, clamp_max):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride)
        self.pool = nn.AvgPool2d(pool_kernel_size)
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        x = self.conv(x)
        x = F.mish(x)
        x = self.pool(x)
        x = torch.clamp(x, min=self.clamp_min, max=self.clamp_max)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, pool_kernel_size, clamp_min, clamp_max]
