# Level 1 task: batched A @ B^T (attention-score layout), A and B (64, 1024, 128).
import torch
import torch.nn as nn

batch_size = 64
M = 1024
N = 1024
K = 128


class Model(nn.Module):
    """Multiplies each matrix of a batch by the transpose of the matching matrix of a second batch."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B.transpose(1, 2))


def get_inputs():
    A = torch.randn(batch_size, M, K)
    B = torch.randn(batch_size, N, K)
    return [A, B]


def get_init_inputs():
    return []
