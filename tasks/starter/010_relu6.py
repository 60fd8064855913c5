# Starter task 010: element-wise ReLU6: min(max(x, 0), 6) on (8192, 16384) float32.
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 8192
cols = 16384


class Model(nn.Module):
    """Element-wise ReLU6: min(max(x, 0), 6)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu6(x)


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return []
