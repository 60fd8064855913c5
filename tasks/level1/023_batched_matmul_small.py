# Level 1 task: many small matrix products, (16384, 64, 64) @ (16384, 64, 64).
import torch
import torch.nn as nn

batch_size = 16384
M = 64
K = 64
N = 64


class Model(nn.Module):
    """Multiplies a large batch of small square matrices."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


def get_inputs():
    A = torch.randn(batch_size, M, K)
    B = torch.randn(batch_size, K, N)
    return [A, B]


def get_init_inputs():
    return []
