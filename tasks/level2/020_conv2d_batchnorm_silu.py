# Level 2 task: Conv2d(128->256, k3x3, pad 1) -> BatchNorm2d (batch statistics, as in training mode) -> SiLU.
# Sizes: x (64, 128, 64, 64) -> output (64, 256, 64, 64) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
in_channels = 128
out_channels = 256
height = 64
width = 64
kernel_size = 3
padding = 1


class Model(nn.Module):
    """Conv2d(128->256, k3x3, pad 1), then BatchNorm2d (batch statistics, as in training mode), SiLU."""

    def __init__(self, in_channels, out_channels, kernel_size, padding):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        # Batch statistics whatever the module's mode (the engine evaluates models in eval mode,
        # KernelBench's harness in training mode): no running buffers to fall back on.
        self.bn = nn.BatchNorm2d(out_channels, track_running_stats=False)

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = F.silu(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding]
