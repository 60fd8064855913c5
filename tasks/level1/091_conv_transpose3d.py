# Level 1 task: nn.ConvTranspose3d(32, 16, 3, stride 2, padding 1, output_padding 1, no bias) on a
#   (8, 32, 32, 64, 64) float32 tensor.
import torch
import torch.nn as nn

batch_size = 8
in_channels = 32
out_channels = 16
depth = 32
height = 64
width = 64
kernel_size = 3
stride = 2
padding = 1
output_padding = 1


class Model(nn.Module):
    """Applies a transposed 3-D convolution that doubles every spatial dimension."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int, padding: int,
                 output_padding: int):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                                       output_padding=output_padding, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding]
