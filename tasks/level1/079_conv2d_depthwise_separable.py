# Level 1 task: depthwise-separable conv: depthwise 3 x 3 (64 ch) then pointwise 1 x 1 (64 -> 128), no bias,
#   on (16, 64, 256, 256).
import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
height = 256
width = 256
kernel_size = 3
padding = 1


class Model(nn.Module):
    """Applies a depthwise 3 x 3 convolution followed by a pointwise 1 x 1 convolution."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, padding: int):
        super().__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, kernel_size, padding=padding, groups=in_channels,
                                   bias=False)
        self.pointwise = nn.Conv2d(in_channels, out_channels, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pointwise(self.depthwise(x))


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding]
