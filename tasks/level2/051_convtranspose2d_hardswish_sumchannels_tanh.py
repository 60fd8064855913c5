# Level 2 task: ConvTranspose2d(128->64, k3x3, stride 2, pad 1, out_pad 1) -> HardSwish -> sum over channels -> Tanh.
# Sizes: x (32, 128, 64, 64) -> output (32, 1, 128, 128) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 128
out_channels = 64
height = 64
width = 64
kernel_size = 3
stride = 2
padding = 1
output_padding = 1


class Model(nn.Module):
    """ConvTranspose2d(128->64, k3x3, stride 2, pad 1, out_pad 1), then HardSwish, sum over channels, Tanh."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding)

    def forward(self, x):
        x = self.conv(x)
        x = F.hardswish(x)
        x = torch.sum(x, dim=1, keepdim=True)
        x = torch.tanh(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding]
