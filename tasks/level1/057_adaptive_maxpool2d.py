# Level 1 task: nn.AdaptiveMaxPool2d((20, 20)) on a (32, 256, 128, 128) float32 tensor (uneven windows).
import torch
import torch.nn as nn

batch_size = 32
channels = 256
height = 128
width = 128
output_size = (20, 20)


class Model(nn.Module):
    """Takes the maximum over adaptive windows to a fixed 20 x 20 output."""

    def __init__(self, output_size: tuple):
        super().__init__()
        self.pool = nn.AdaptiveMaxPool2d(output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return [output_size]
