# Level 1 task: nn.Conv2d(3, 64, 7, stride 2, padding 3, bias) on a (64, 3, 448, 448) float32 tensor
#   (image stem).
import torch
import torch.nn as nn

batch_size = 64
in_channels = 3
out_channels = 64
height = 448
width = 448
kernel_size = 7
stride = 2
padding = 3


class Model(nn.Module):
    """Applies a large-kernel, strided convolution to a 3-channel image (a ResNet-style stem)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                              bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
