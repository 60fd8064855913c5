# Level 1 task: square matrix multiplication C = A @ B with N = 4096 (float32).
import torch
import torch.nn as nn

N = 4096


class Model(nn.Module):
    """Performs a single square matrix multiplication (C = A * B)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(N, N)
    B = torch.randn(N, N)
    return [A, B]


def get_init_inputs():
    return []
