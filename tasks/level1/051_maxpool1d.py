# Level 1 task: nn.MaxPool1d(kernel 4, stride 2, padding 2, dilation 3) on a (64, 128, 16384) float32 tensor.
import torch
import torch.nn as nn

batch_size = 64
channels = 128
length = 16384
kernel_size = 4
stride = 2
padding = 2
dilation = 3


class Model(nn.Module):
    """Applies dilated 1-D max pooling."""

    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    x = torch.randn(batch_size, channels, length)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding, dilation]
