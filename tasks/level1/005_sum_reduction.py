# Level 1 task: sum over dim=1 (keepdim) of a (16, 4096, 2048) float32 tensor.
import torch
import torch.nn as nn

batch_size = 16
dim1 = 4096
dim2 = 2048
reduce_dim = 1


class Model(nn.Module):
    """Sums over one dimension, keeping it (size 1) in the output."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
