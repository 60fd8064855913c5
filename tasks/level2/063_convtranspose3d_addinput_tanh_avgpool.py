# Level 2 task: ConvTranspose3d(32->32, k3x3x3, stride 2, pad 1, out_pad 1) -> + input skip -> Tanh -> AvgPool3d(2).
# Sizes: x (4, 32, 16, 64, 64), skip (4, 32, 32, 128, 128) -> output (4, 32, 16, 64, 64) (float32).
import torch
import torch.nn as nn

batch_size = 4
in_channels = 32
out_channels = 32
depth = 16
height = 64
width = 64
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
pool_kernel_size = 2


class Model(nn.Module):
    """ConvTranspose3d(32->32, k3x3x3, stride 2, pad 1, out_pad 1), then + input skip, Tanh, AvgPool3d(2)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, pool_kernel_size):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding)
        self.pool = nn.AvgPool3d(pool_kernel_size)

    def forward(self, x, skip):
        x = self.conv(x)
        x = x + skip
        x = torch.tanh(x)
        x = self.pool(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    skip = torch.randn(batch_size, out_channels, 2 * depth, 2 * height, 2 * width)
    return [x, skip]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, pool_kernel_size]
