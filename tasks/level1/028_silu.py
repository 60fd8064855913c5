# Level 1 task: elementwise SiLU / swish x * sigmoid(x) on a (16, 64, 256, 512) float32 tensor.
import torch
import torch.nn as nn

batch_size = 16
channels = 64
height = 256
width = 512


class Model(nn.Module):
    """Applies the sigmoid linear unit (swish)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return []
