# Starter task 031: element-wise |x| ** exponent on (8192, 16384) float32 (exponent = 1.5).
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 8192
cols = 16384
exponent = 1.5


class Model(nn.Module):
    """Element-wise |x| ** exponent."""

    def __init__(self, exponent: float):
        super().__init__()
        self.exponent = exponent

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.pow(torch.abs(x), self.exponent)


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return [exponent]
