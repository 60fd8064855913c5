# Level 1 task: nn.MaxPool3d(kernel 3, stride 2, padding 1) on a (8, 32, 32, 128, 128) float32 tensor.
import torch
import torch.nn as nn

batch_size = 8
channels = 32
depth = 32
height = 128
width = 128
kernel_size = 3
stride = 2
padding = 1


class Model(nn.Module):
    """Applies 3-D max pooling."""

    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    x = torch.randn(batch_size, channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding]
