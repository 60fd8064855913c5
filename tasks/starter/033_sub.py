# Starter task 033: element-wise difference of two tensors on (8192, 16384) float32.
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 8192
cols = 16384


class Model(nn.Module):
    """Element-wise difference of two tensors."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x - y


def get_inputs():
    x = torch.randn(rows, cols)
    y = torch.randn(rows, cols)
    return [x, y]


def get_init_inputs():
    return []
