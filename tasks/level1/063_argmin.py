# Level 1 task: argmin over the last dim of a (128, 1024, 1024) float32 tensor (int64 output).
import torch
import torch.nn as nn

batch_size = 128
dim1 = 1024
dim2 = 1024
reduce_dim = 2


class Model(nn.Module):
    """Returns the index of the minimum along one dimension."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmin(x, dim=self.dim)


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
