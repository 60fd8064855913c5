# Level 1 task: matrix multiplication with a large reduction dim, (1024, 32768) @ (32768, 1024).
import torch
import torch.nn as nn

M = 1024
K = 32768
N = 1024


class Model(nn.Module):
    """Multiplies matrices whose inner dimension is much larger than the output."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
