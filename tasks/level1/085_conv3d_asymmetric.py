# Level 1 task: nn.Conv3d(8, 16, kernel (3, 5, 7), no padding, no bias) on a (4, 8, 16, 128, 128) float32
#   tensor.
import torch
import torch.nn as nn

batch_size = 4
in_channels = 8
out_channels = 16
depth = 16
height = 128
width = 128
kernel_size = (3, 5, 7)


class Model(nn.Module):
    """Applies a 3-D convolution with a non-cubic kernel to a shallow volume."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
