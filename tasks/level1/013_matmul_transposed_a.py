# Level 1 task: C = A.T @ B with A stored as (4096, 2048) and B (4096, 4096).
import torch
import torch.nn as nn

M = 2048
K = 4096
N = 4096


class Model(nn.Module):
    """Matmul with the first operand transposed (A is stored K x M)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B)


def get_inputs():
    A = torch.randn(K, M)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
