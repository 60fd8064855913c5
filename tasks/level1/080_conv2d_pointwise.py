# Level 1 task: pointwise nn.Conv2d(128, 256, 1, no bias) on a (16, 128, 128, 128) float32 tensor.
import torch
import torch.nn as nn

batch_size = 16
in_channels = 128
out_channels = 256
height = 128
width = 128


class Model(nn.Module):
    """Applies a 1 x 1 convolution (a per-pixel matmul over channels)."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels]
