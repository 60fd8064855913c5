# Level 1 task: depthwise nn.Conv2d(128, 128, 3, padding 1, groups 128, no bias) on a (16, 128, 256, 256)
#   float32 tensor.
import torch
import torch.nn as nn

batch_size = 16
in_channels = 128
height = 256
width = 256
kernel_size = 3
padding = 1


class Model(nn.Module):
    """Applies a depthwise 3 x 3 convolution (one filter per channel; memory bound)."""

    def __init__(self, in_channels: int, kernel_size: int, padding: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, in_channels, kernel_size, padding=padding, groups=in_channels,
                              bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, kernel_size, padding]
