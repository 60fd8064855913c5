# Level 1 task: matrix-scalar multiplication C = A * s, A (8192, 16384), s = 2.5 (memory bound).
import torch
import torch.nn as nn

M = 8192
N = 16384
scalar = 2.5


class Model(nn.Module):
    """Multiplies a matrix by a scalar given at construction."""

    def __init__(self, s: float):
        super().__init__()
        self.s = s

    def forward(self, A: torch.Tensor) -> torch.Tensor:
        return A * self.s


def get_inputs():
    A = torch.randn(M, N)
    return [A]


def get_init_inputs():
    return [scalar]
