# Level 1 task: nn.Conv3d(16, 32, 3, padding 1, no bias) on a (8, 16, 64, 64, 64) float32 tensor.
import torch
import torch.nn as nn

batch_size = 8
in_channels = 16
out_channels = 32
depth = 64
height = 64
width = 64
kernel_size = 3
padding = 1


class Model(nn.Module):
    """Applies a standard 3 x 3 x 3 convolution that keeps the volume size."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, padding: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=padding, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding]
