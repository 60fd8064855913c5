# Starter task 023: element-wise leaky ReLU on (8192, 16384) float32 (negative_slope = 0.2).
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 8192
cols = 16384
negative_slope = 0.2


class Model(nn.Module):
    """Element-wise leaky ReLU."""

    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(x, negative_slope=self.negative_slope)


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return [negative_slope]
