# Level 1 task: batched matrix multiplication, (128, 512, 256) @ (128, 256, 1024).
import torch
import torch.nn as nn

batch_size = 128
M = 512
K = 256
N = 1024


class Model(nn.Module):
    """Multiplies two batches of matrices (torch.bmm)."""

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
