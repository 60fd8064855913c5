# Level 2 task: Conv3d(32->32, k3x3x3) -> Mish -> AvgPool3d(2) -> LogSoftmax over channels.
# Sizes: x (4, 32, 48, 64, 64) -> output (4, 32, 23, 31, 31) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
in_channels = 32
out_channels = 32
depth = 48
height = 64
width = 64
kernel_size = 3
pool_kernel_size = 2


class Model(nn.Module):
    """Conv3d(32->32, k3x3x3), then Mish, AvgPool3d(2), LogSoftmax over channels."""

    def __init__(self, in_channels, out_channels, kernel_size, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.pool = nn.AvgPool3d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = F.mish(x)
        x = self.pool(x)
        x = torch.log_softmax(x, dim=1)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool_kernel_size]
