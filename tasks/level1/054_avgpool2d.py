# Level 1 task: nn.AvgPool2d(kernel 3, stride 1, padding 1) on a (16, 64, 256, 512) float32 tensor.
import torch
import torch.nn as nn

batch_size = 16
channels = 64
height = 256
width = 512
kernel_size = 3
stride = 1
padding = 1


class Model(nn.Module):
    """Applies 2-D average pooling that keeps the spatial size (a 3 x 3 box filter)."""

    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding]
