# Level 1 task: nn.Conv1d(128, 256, 3, padding 1, no bias) on a (32, 128, 4096) float32 tensor.
import torch
import torch.nn as nn

batch_size = 32
in_channels = 128
out_channels = 256
length = 4096
kernel_size = 3
padding = 1


class Model(nn.Module):
    """Applies a standard 1-D convolution that keeps the length."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, padding: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=padding, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(batch_size, in_channels, length)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding]
