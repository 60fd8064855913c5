# Starter task 025: element-wise CELU on (8192, 16384) float32 (alpha = 1.5).
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 8192
cols = 16384
alpha = 1.5


class Model(nn.Module):
    """Element-wise CELU."""

    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.celu(x, alpha=self.alpha)


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return [alpha]
