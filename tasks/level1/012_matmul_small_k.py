# Level 1 task: matrix multiplication with a small reduction dim, (12288, 64) @ (64, 12288) (output bound).
import torch
import torch.nn as nn

M = 12288
K = 64
N = 12288


class Model(nn.Module):
    """Outer-product-like matmul: a small inner dimension and a large output."""

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
