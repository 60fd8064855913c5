# Level 1 task: 4-D tensor-matrix contraction einsum('bijl,lk->bijk'), (8, 64, 256, 256) x (256, 768).
import torch
import torch.nn as nn

b = 8
i = 64
j = 256
l = 256
k = 768


class Model(nn.Module):
    """Contracts the last dimension of a 4-D tensor with a matrix."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bijl,lk->bijk", A, B)


def get_inputs():
    A = torch.randn(b, i, j, l)
    B = torch.randn(l, k)
    return [A, B]


def get_init_inputs():
    return []
