# Level 1 task: nn.Conv1d(64, 128, 5, stride 2, padding 6, dilation 3, no bias) on a (32, 64, 32768) float32
#   tensor.
import torch
import torch.nn as nn

batch_size = 32
in_channels = 64
out_channels = 128
length = 32768
kernel_size = 5
stride = 2
padding = 6
dilation = 3


class Model(nn.Module):
    """Applies a strided, dilated 1-D convolution."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int, padding: int,
                 dilation: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                              dilation=dilation, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(batch_size, in_channels, length)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation]
