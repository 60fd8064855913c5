# Level 1 task: nn.ConvTranspose1d(128, 64, 4, stride 2, padding 1, no bias) on a (32, 128, 8192) float32
#   tensor.
import torch
import torch.nn as nn

batch_size = 32
in_channels = 128
out_channels = 64
length = 8192
kernel_size = 4
stride = 2
padding = 1


class Model(nn.Module):
    """Applies a transposed 1-D convolution that doubles the length."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.conv = nn.ConvTranspose1d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                                       bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(batch_size, in_channels, length)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
