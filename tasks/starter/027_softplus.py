# Starter task 027: element-wise softplus on (8192, 16384) float32 (beta = 2.0, threshold = 10.0).
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 8192
cols = 16384
beta = 2.0
threshold = 10.0


class Model(nn.Module):
    """Element-wise softplus."""

    def __init__(self, beta: float, threshold: float):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softplus(x, beta=self.beta, threshold=self.threshold)


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return [beta, threshold]
