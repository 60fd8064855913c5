# Level 2 task: Conv2d(128->256, k3x3, stride 2, pad 1) -> BatchNorm2d (batch statistics, as in training mode) -> ReLU -> MaxPool2d(2).
# Sizes: x (32, 128, 128, 128) -> output (32, 256, 32, 32) (float32).
import torch
import torch.nn as nn

batch_size = 32
in_channels = 128
out_channels = 256
height = 128
width = 128
kernel_size = 3
stride = 2
padding = 1
pool_kernel_size = 2


class Model(nn.Module):
    """Conv2d(128->256, k3x3, stride 2, pad 1), then BatchNorm2d (batch statistics, as in training mode), ReLU, MaxPool2d(2)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        # Batch statistics whatever the module's mode (the engine evaluates models in eval mode,
        # KernelBench's harness in training mode): no running buffers to fall back on.
        self.bn = nn.BatchNorm2d(out_channels, track_running_stats=False)
        self.pool = nn.MaxPool2d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = torch.relu(x)
        x = self.pool(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, pool_kernel_size]
