# Level 1 task: matrix multiplication with odd sizes, (4099, 3001) @ (3001, 5003).
import torch
import torch.nn as nn

M = 4099
K = 3001
N = 5003


class Model(nn.Module):
    """Multiplies matrices whose sizes are not multiples of any tile size."""

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
