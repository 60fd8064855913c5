# Level 2 task: Conv2d(128->256, k3x3, pad 1) -> LayerNorm over (C, H, W) -> GELU.
# Sizes: x (32, 128, 32, 32) -> output (32, 256, 32, 32) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 128
out_channels = 256
height = 32
width = 32
kernel_size = 3
padding = 1
normalized_shape = (out_channels, height, width)


class Model(nn.Module):
    """Conv2d(128->256, k3x3, pad 1), then LayerNorm over (C, H, W), GELU."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, normalized_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x):
        x = self.conv(x)
        x = self.ln(x)
        x = F.gelu(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, normalized_shape]
