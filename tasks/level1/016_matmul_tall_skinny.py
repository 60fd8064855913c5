# Level 1 task: tall-skinny matrix multiplication, (65536, 512) @ (512, 512).
import torch
import torch.nn as nn

M = 65536
K = 512
N = 512


class Model(nn.Module):
    """Multiplies a tall, narrow matrix by a small square one."""

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
