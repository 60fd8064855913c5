# Level 1 task: 3-D tensor times matrix, (16, 1024, 2048) @ (2048, 1024).
import torch
import torch.nn as nn

batch_size = 16
M = 1024
K = 2048
N = 1024


class Model(nn.Module):
    """Multiplies every matrix of a 3-D tensor by one shared matrix."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(batch_size, M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
