# Level 2 task: ConvTranspose2d(64->64, k5x5) -> * 2.0 -> Softmax over channels -> * residual (main-op output) -> sum over channels.
# Sizes: x (32, 64, 64, 64) -> output (32, 1, 68, 68) (float32).
import torch
import torch.nn as nn

batch_size = 32
in_channels = 64
out_channels = 64
height = 64
width = 64
kernel_size = 5
scale_factor = 2.0


class Model(nn.Module):
    """ConvTranspose2d(64->64, k5x5), then * 2.0, Softmax over channels, * residual (main-op output), sum over channels."""

    def __init__(self, in_channels, out_channels, kernel_size, scale_factor):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.conv(x)
        residual = x
        x = x * self.scale_factor
        x = torch.softmax(x, dim=1)
        x = x * residual
        x = torch.sum(x, dim=1, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scale_factor]
