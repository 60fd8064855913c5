# Starter task 026: element-wise hardtanh on (8192, 16384) float32 (min_val = -2.0, max_val = 2.0).
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 8192
cols = 16384
min_val = -2.0
max_val = 2.0


class Model(nn.Module):
    """Element-wise hardtanh."""

    def __init__(self, min_val: float, max_val: float):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardtanh(x, min_val=self.min_val, max_val=self.max_val)


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return [min_val, max_val]
