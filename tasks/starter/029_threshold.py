# Starter task 029: element-wise threshold: x where x > threshold, else value on (8192, 16384) float32 (threshold = 0.1, value = -1.0).
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 8192
cols = 16384
threshold = 0.1
value = -1.0


class Model(nn.Module):
    """Element-wise threshold: x where x > threshold, else value."""

    def __init__(self, threshold: float, value: float):
        super().__init__()
        self.threshold = threshold
        self.value = value

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.threshold(x, self.threshold, self.value)


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return [threshold, value]
