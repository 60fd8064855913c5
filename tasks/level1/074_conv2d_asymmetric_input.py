# Level 1 task: nn.Conv2d(32, 64, 3, padding 1, bias) on a wide (8, 32, 128, 2048) float32 tensor.
import torch
import torch.nn as nn

batch_size = 8
in_channels = 32
out_channels = 64
height = 128
width = 2048
kernel_size = 3
padding = 1


class Model(nn.Module):
    """Applies a 3 x 3 2-D convolution with bias to a wide, short input."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, padding: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding]
