# Level 1 task: nn.Conv2d(128, 256, 3, padding 1, groups 8, no bias) on a (16, 128, 128, 128) float32 tensor.
import torch
import torch.nn as nn

batch_size = 16
in_channels = 128
out_channels = 256
height = 128
width = 128
kernel_size = 3
padding = 1
groups = 8


class Model(nn.Module):
    """Applies a grouped 3 x 3 2-D convolution (8 independent channel groups)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, padding: int, groups: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, groups=groups,
                              bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, groups]
