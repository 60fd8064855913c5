# Level 2 task: Conv3d(32->32, k3x3x3, pad 1) -> BatchNorm3d (batch statistics, as in training mode) -> GELU -> clamp(-0.1, 1.0).
# Sizes: x (4, 32, 32, 64, 64) -> output (4, 32, 32, 64, 64) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
in_channels = 32
out_channels = 32
depth = 32
height = 64
width = 64
kernel_size = 3
padding = 1
clamp_min = -0.1
clamp_max = 1.0


class Model(nn.Module):
    """Conv3d(32->32, k3x3x3, pad 1), then BatchNorm3d (batch statistics, as in training mode), GELU, clamp(-0.1, 1.0)."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, clamp_min, clamp_max):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=padding)
        # Batch statistics whatever the module's mode (the engine evaluates models in eval mode,
        # KernelBench's harness in training mode): no running buffers to fall back on.
        self.bn = nn.BatchNorm3d(out_channels, track_running_stats=False)
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = F.gelu(x)
        x = torch.clamp(x, min=self.clamp_min, max=self.clamp_max)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, clamp_min, clamp_max]
