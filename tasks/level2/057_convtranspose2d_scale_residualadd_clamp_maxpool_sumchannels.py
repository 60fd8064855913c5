# Level 2 task: ConvTranspose2d(64->64, k3x3, stride 2, pad 1, out_pad 1) -> * 2.0 -> + residual (main-op output) -> clamp(-1.0, 1.0) -> MaxPool2d(2) -> sum over channels.
# Sizes: x (32, 64, 96, 96) -> output (32, 1, 96, 96) (float32).
import torch
import torch.nn as nn

batch_size = 32
in_channels = 64
out_channels = 64
height = 96
width = 96
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
scale_factor = 2.0
clamp_min = -1.0
clamp_max = 1.0
pool_kernel_size = 2


class Model(nn.Module):
    """ConvTranspose2d(64->64, k3x3, stride 2, pad 1, out_pad 1), then * 2.0, + residual (main-op output), clamp(-1.0, 1.0), MaxPool2d(2), sum over channels."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, scale_factor, clamp_min, clamp_max, pool_kernel_size):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding)
        self.scale_factor = scale_factor
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max
        self.pool = nn.MaxPool2d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        residual = x
        x = x * self.scale_factor
        x = x + residual
        x = torch.clamp(x, min=self.clamp_min, max=self.clamp_max)
        x = self.pool(x)
        x = torch.sum(x, dim=1, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, scale_factor, clamp_min, clamp_max, pool_kernel_size]
