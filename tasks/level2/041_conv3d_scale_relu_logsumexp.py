# Level 2 task: Conv3d(64->32, k3x3x3, pad 1) -> * 4.0 -> ReLU -> logsumexp over channels.
# Sizes: x (8, 64, 16, 48, 48) -> output (8, 1, 16, 48, 48) (float32).
import torch
import torch.nn as nn

batch_size = 8
in_channels = 64
out_channels = 32
depth = 16
height = 48
width = 48
kernel_size = 3
padding = 1
scale_factor = 4.0


class Model(nn.Module):
    """Conv3d(64->32, k3x3x3, pad 1), then * 4.0, ReLU, logsumexp over channels."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, scale_factor):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=padding)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.conv(x)
        x = x * self.scale_factor
        x = torch.relu(x)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, scale_factor]
