# Level 1 task: nn.Conv3d(32, 64, 3, stride 2, padding 1, groups 4, no bias) on a (8, 32, 48, 96, 96) float32
#   tensor.
import torch
import torch.nn as nn

batch_size = 8
in_channels = 32
out_channels = 64
depth = 48
height = 96
width = 96
kernel_size = 3
stride = 2
padding = 1
groups = 4


class Model(nn.Module):
    """Applies a strided, grouped 3-D convolution that halves every spatial dimension."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int, padding: int,
                 groups: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                              groups=groups, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, groups]
