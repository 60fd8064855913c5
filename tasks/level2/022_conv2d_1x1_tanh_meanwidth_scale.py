# Level 2 task: Conv2d(512->128, k1x1) -> Tanh -> mean over width -> * 10.0.
# Sizes: x (32, 512, 64, 64) -> output (32, 128, 64, 1) (float32).
import torch
import torch.nn as nn

batch_size = 32
in_channels = 512
out_channels = 128
height = 64
width = 64
kernel_size = 1
scale_factor = 10.0


class Model(nn.Module):
    """Conv2d(512->128, k1x1), then Tanh, mean over width, * 10.0."""

    def __init__(self, in_channels, out_channels, kernel_size, scale_factor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.conv(x)
        x = torch.tanh(x)
        x = torch.mean(x, dim=-1, keepdim=True)
        x = x * self.scale_factor
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scale_factor]
