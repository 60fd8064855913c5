# Level 2 task: Conv2d(64->128, k3x3, pad 1) -> Softmax over channels -> * residual (main-op output) -> sum over channels.
# Sizes: x (32, 64, 96, 96) -> output (32, 1, 96, 96) (float32).
import torch
import torch.nn as nn

batch_size = 32
in_channels = 64
out_channels = 128
height = 96
width = 96
kernel_size = 3
padding = 1


class Model(nn.Module):
    """Conv2d(64->128, k3x3, pad 1), then Softmax over channels, * residual (main-op output), sum over channels."""

    def __init__(self, in_channels, out_channels, kernel_size, padding):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)

    def forward(self, x):
        x = self.conv(x)
        residual = x
        x = torch.softmax(x, dim=1)
        x = x * residual
        x = torch.sum(x, dim=1, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding]
