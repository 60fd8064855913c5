# Level 1 task: nn.ConvTranspose2d(64, 32, kernel (3, 5), stride (1, 2), padding (1, 2), bias) on a
#   (16, 64, 128, 256) float32 tensor.
import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 32
height = 128
width = 256
kernel_size = (3, 5)
stride = (1, 2)
padding = (1, 2)


class Model(nn.Module):
    """Applies a transposed 2-D convolution with a non-square kernel and stride (upsamples the width only)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple,
                 padding: tuple):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                                       bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
