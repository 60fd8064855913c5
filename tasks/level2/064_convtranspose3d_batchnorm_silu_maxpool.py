# Level 2 task: ConvTranspose3d(64->64, k3x3x3, pad 1) -> BatchNorm3d (batch statistics, as in training mode) -> SiLU -> MaxPool3d(2).
# Sizes: x (8, 64, 16, 32, 32) -> output (8, 64, 8, 16, 16) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
in_channels = 64
out_channels = 64
depth = 16
height = 32
width = 32
kernel_size = 3
padding = 1
pool_kernel_size = 2


class Model(nn.Module):
    """ConvTranspose3d(64->64, k3x3x3, pad 1), then BatchNorm3d (batch statistics, as in training mode), SiLU, MaxPool3d(2)."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, pool_kernel_size):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, padding=padding)
        # Batch statistics whatever the module's mode (the engine evaluates models in eval mode,
        # KernelBench's harness in training mode): no running buffers to fall back on.
        self.bn = nn.BatchNorm3d(out_channels, track_running_stats=False)
        self.pool = nn.MaxPool3d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = F.silu(x)
        x = self.pool(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, pool_kernel_size]
