# Level 1 task: C = A @ B.T with A (4096, 2048) and B stored as (4096, 2048).
import torch
import torch.nn as nn

M = 4096
K = 2048
N = 4096


class Model(nn.Module):
    """Matmul with the second operand transposed (B is stored N x K)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B.T)


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(N, K)
    return [A, B]


def get_init_inputs():
    return []
