# Level 1 task: nn.Conv2d(64, 64, 3, padding 2, dilation 2, no bias) on a (16, 64, 192, 192) float32 tensor.
import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 64
height = 192
width = 192
kernel_size = 3
padding = 2
dilation = 2


class Model(nn.Module):
    """Applies a dilated (atrous) 3 x 3 2-D convolution that keeps the spatial size."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, padding: int, dilation: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, dilation=dilation,
                              bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, dilation]
