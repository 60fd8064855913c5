# Level 1 task: nn.AvgPool1d(kernel 8, stride 4, padding 2) on a (64, 128, 16384) float32 tensor.
import torch
import torch.nn as nn

batch_size = 64
channels = 128
length = 16384
kernel_size = 8
stride = 4
padding = 2


class Model(nn.Module):
    """Applies 1-D average pooling (zero padding counted in the average)."""

    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    x = torch.randn(batch_size, channels, length)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding]
