# Level 1 task: nn.Conv2d(32, 64, 5, stride 2, padding 2, no bias) on a (16, 32, 256, 256) float32 tensor.
import torch
import torch.nn as nn

batch_size = 16
in_channels = 32
out_channels = 64
height = 256
width = 256
kernel_size = 5
stride = 2
padding = 2


class Model(nn.Module):
    """Applies a strided 5 x 5 2-D convolution that halves the spatial size."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                              bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
