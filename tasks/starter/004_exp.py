# Starter task 004: element-wise exponential on (8192, 16384) float32.
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 8192
cols = 16384


class Model(nn.Module):
    """Element-wise exponential."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.exp(x)


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return []
