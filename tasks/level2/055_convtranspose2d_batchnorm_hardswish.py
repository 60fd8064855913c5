# Level 2 task: ConvTranspose2d(64->32, k4x4, stride 2, pad 1) -> BatchNorm2d (batch statistics, as in training mode) -> HardSwish.
# Sizes: x (16, 64, 128, 128) -> output (16, 32, 256, 256) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 64
out_channels = 32
height = 128
width = 128
kernel_size = 4
stride = 2
padding = 1


class Model(nn.Module):
    """ConvTranspose2d(64->32, k4x4, stride 2, pad 1), then BatchNorm2d (batch statistics, as in training mode), HardSwish."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        # Batch statistics whatever the module's mode (the engine evaluates models in eval mode,
        # KernelBench's harness in training mode): no running buffers to fall back on.
        self.bn = nn.BatchNorm2d(out_channels, track_running_stats=False)

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = F.hardswish(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
