# Level 1 task: product over dim=1 of a (131072, 1024) float32 tensor with entries near 1.
import torch
import torch.nn as nn

batch_size = 131072
dim = 1024
reduce_dim = 1


class Model(nn.Module):
    """Multiplies the entries along one dimension."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.prod(x, dim=self.dim)


def get_inputs():
    x = 1 + 0.02 * torch.randn(batch_size, dim)  # products of ~1024 such factors stay O(1)
    return [x]


def get_init_inputs():
    return [reduce_dim]
