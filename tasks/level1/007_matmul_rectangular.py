# Level 1 task: rectangular matrix multiplication C = A @ B, A (8192, 1024), B (1024, 4096).
import torch
import torch.nn as nn

M = 8192
K = 1024
N = 4096


class Model(nn.Module):
    """Multiplies a wide-output rectangular pair of matrices."""

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
