# Level 2 task: Conv2d(256->512, k1x1) -> * learned multiplier -> Tanh -> sum over channels.
# Sizes: x (32, 256, 64, 64) -> output (32, 1, 64, 64) (float32).
import torch
import torch.nn as nn

batch_size = 32
in_channels = 256
out_channels = 512
height = 64
width = 64
kernel_size = 1
multiplier_shape = (out_channels, 1, 1)


class Model(nn.Module):
    """Conv2d(256->512, k1x1), then * learned multiplier, Tanh, sum over channels."""

    def __init__(self, in_channels, out_channels, kernel_size, multiplier_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.multiplier = nn.Parameter(1.0 + 0.1 * torch.randn(multiplier_shape))

    def forward(self, x):
        x = self.conv(x)
        x = x * self.multiplier
        x = torch.tanh(x)
        x = torch.sum(x, dim=1, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, multiplier_shape]
