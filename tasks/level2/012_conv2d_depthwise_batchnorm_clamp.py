# Level 2 task: Conv2d(256->256, k3x3, pad 1, groups 256) -> BatchNorm2d (batch statistics, as in training mode) -> clamp(-1.0, 1.0).
# Sizes: x (32, 256, 128, 128) -> output (32, 256, 128, 128) (float32).
import torch
import torch.nn as nn

batch_size = 32
in_channels = 256
out_channels = 256
height = 128
width = 128
kernel_size = 3
padding = 1
groups = 256
clamp_min = -1.0
clamp_max = 1.0


class Model(nn.Module):
    """Conv2d(256->256, k3x3, pad 1, groups 256), then BatchNorm2d (batch statistics, as in training mode), clamp(-1.0, 1.0)."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, groups, clamp_min, clamp_max):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, groups=groups)
        # Batch statistics whatever the module's mode (the engine evaluates models in eval mode,
        # KernelBench's harness in training mode): no running buffers to fall back on.
        self.bn = nn.BatchNorm2d(out_channels, track_running_stats=False)
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = torch.clamp(x, min=self.clamp_min, max=self.clamp_max)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, groups, clamp_min, clamp_max]
