# Level 1 task: diag(a) @ B, a (4096,), B (4096, 4096) (a row scaling written as a dense matmul).
import torch
import torch.nn as nn

N = 4096
M = 4096


class Model(nn.Module):
    """Multiplies a diagonal matrix, given by its diagonal, with a dense matrix."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.diag(a) @ B


def get_inputs():
    a = torch.randn(N)
    B = torch.randn(N, M)
    return [a, B]


def get_init_inputs():
    return []
