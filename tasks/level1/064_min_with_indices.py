# Level 1 task: min with indices over dim=1 of a (32, 2048, 2048) float32 tensor
#   (outputs: values, int64 indices).
import torch
import torch.nn as nn

batch_size = 32
dim1 = 2048
dim2 = 2048
reduce_dim = 1


class Model(nn.Module):
    """Returns both the minimum values and their indices along one dimension."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> tuple:
        values, indices = torch.min(x, dim=self.dim)
        return values, indices


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
