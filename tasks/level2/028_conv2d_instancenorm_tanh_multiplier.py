# Level 2 task: Conv2d(64->128, k3x3, pad 1) -> InstanceNorm2d -> Tanh -> * learned multiplier.
# Sizes: x (64, 64, 64, 64) -> output (64, 128, 64, 64) (float32).
import torch
import torch.nn as nn

batch_size = 64
in_channels = 64
out_channels = 128
height = 64
width = 64
kernel_size = 3
padding = 1
multiplier_shape = (out_channels, 1, 1)


class Model(nn.Module):
    """Conv2d(64->128, k3x3, pad 1), then InstanceNorm2d, Tanh, * learned multiplier."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, multiplier_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.norm = nn.InstanceNorm2d(out_channels)
        self.multiplier = nn.Parameter(1.0 + 0.1 * torch.randn(multiplier_shape))

    def forward(self, x):
        x = self.conv(x)
        x = self.norm(x)
        x = torch.tanh(x)
        x = x * self.multiplier
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, multiplier_shape]
