# Starter task 024: element-wise ELU on (8192, 16384) float32 (alpha = 0.5).
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 8192
cols = 16384
alpha = 0.5


class Model(nn.Module):
    """Element-wise ELU."""

    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.elu(x, alpha=self.alpha)


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return [alpha]
