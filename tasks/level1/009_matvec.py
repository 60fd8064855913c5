# Level 1 task: matrix-vector product y = A @ x, A (16384, 12288), x (12288, 1) (memory bound).
import torch
import torch.nn as nn

M = 16384
K = 12288


class Model(nn.Module):
    """Multiplies a large matrix by a column vector."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, x)


def get_inputs():
    A = torch.randn(M, K)
    x = torch.randn(K, 1)
    return [A, x]


def get_init_inputs():
    return []
