# Level 2 task: Conv3d(3->32, k3x3x3, pad 1) -> BatchNorm3d (batch statistics, as in training mode) -> ReLU -> AvgPool3d((1, 2, 2)).
# Sizes: x (16, 3, 16, 112, 112) -> output (16, 32, 16, 56, 56) (float32).
import torch
import torch.nn as nn

batch_size = 16
in_channels = 3
out_channels = 32
depth = 16
height = 112
width = 112
kernel_size = 3
padding = 1
pool_kernel_size = (1, 2, 2)


class Model(nn.Module):
    """Conv3d(3->32, k3x3x3, pad 1), then BatchNorm3d (batch statistics, as in training mode), ReLU, AvgPool3d((1, 2, 2))."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=padding)
        # Batch statistics whatever the module's mode (the engine evaluates models in eval mode,
        # KernelBench's harness in training mode): no running buffers to fall back on.
        self.bn = nn.BatchNorm3d(out_channels, track_running_stats=False)
        self.pool = nn.AvgPool3d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = torch.relu(x)
        x = self.pool(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, pool_kernel_size]
