# Level 2 task: Conv3d(64->64, k3x3x3, pad 1) -> InstanceNorm3d -> Tanh -> + residual (main-op output).
# Sizes: x (8, 64, 16, 32, 32) -> output (8, 64, 16, 32, 32) (float32).
import torch
import torch.nn as nn

batch_size = 8
in_channels = 64
out_channels = 64
depth = 16
height = 32
width = 32
kernel_size = 3
padding = 1


class Model(nn.Module):
    """Conv3d(64->64, k3x3x3, pad 1), then InstanceNorm3d, Tanh, + residual (main-op output)."""

    def __init__(self, in_channels, out_channels, kernel_size, padding):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=padding)
        self.norm = nn.InstanceNorm3d(out_channels)

    def forward(self, x):
        x = self.conv(x)
        residual = x
        x = self.norm(x)
        x = torch.tanh(x)
        x = x + residual
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding]
