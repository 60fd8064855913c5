# Level 2 task: Conv2d(64->128, k3x3) -> ReLU -> + learned bias.
# Sizes: x (32, 64, 128, 128) -> output (32, 128, 126, 126) (float32).
import torch
import torch.nn as nn

batch_size = 32
in_channels = 64
out_channels = 128
height = 128
width = 128
kernel_size = 3
bias_shape = (out_channels, 1, 1)


class Model(nn.Module):
    """Conv2d(64->128, k3x3), then ReLU, + learned bias."""

    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, x):
        x = self.conv(x)
        x = torch.relu(x)
        x = x + self.bias
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape]
