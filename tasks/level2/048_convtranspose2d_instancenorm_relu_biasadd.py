# Level 2 task: ConvTranspose2d(256->128, k3x3, pad 1) -> InstanceNorm2d -> ReLU -> + learned bias.
# Sizes: x (32, 256, 32, 32) -> output (32, 128, 32, 32) (float32).
import torch
import torch.nn as nn

batch_size = 32
in_channels = 256
out_channels = 128
height = 32
width = 32
kernel_size = 3
padding = 1
bias_shape = (out_channels, 1, 1)


class Model(nn.Module):
    """ConvTranspose2d(256->128, k3x3, pad 1), then InstanceNorm2d, ReLU, + learned bias."""

    def __init__(self, in_channels, out_channels, kernel_size, padding, bias_shape):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, padding=padding)
        self.norm = nn.InstanceNorm2d(out_channels)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, x):
        x = self.conv(x)
        x = self.norm(x)
        x = torch.relu(x)
        x = x + self.bias
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, bias_shape]
