# Level 2 task: ConvTranspose2d(96->96, k3x3, stride 2, pad 1, out_pad 1) -> + learned bias -> Tanh -> * learned multiplier -> AvgPool2d(2).
# Sizes: x (64, 96, 48, 48) -> output (64, 96, 48, 48) (float32).
import torch
import torch.nn as nn

batch_size = 64
in_channels = 96
out_channels = 96
height = 48
width = 48
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
bias_shape = (out_channels, 1, 1)
multiplier_shape = (out_channels, 1, 1)
pool_kernel_size = 2


class Model(nn.Module):
    """ConvTranspose2d(96->96, k3x3, stride 2, pad 1, out_pad 1), then + learned bias, Tanh, * learned multiplier, AvgPool2d(2)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape, multiplier_shape, pool_kernel_size):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)
        self.multiplier = nn.Parameter(1.0 + 0.1 * torch.randn(multiplier_shape))
        self.pool = nn.AvgPool2d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = x + self.bias
        x = torch.tanh(x)
        x = x * self.multiplier
        x = self.pool(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape, multiplier_shape, pool_kernel_size]
