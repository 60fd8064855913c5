# Level 1 task: argmax over dim=1 of a (64, 4096, 512) float32 tensor (int64 output).
import torch
import torch.nn as nn

batch_size = 64
dim1 = 4096
dim2 = 512
reduce_dim = 1


class Model(nn.Module):
    """Returns the index of the maximum along one dimension."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=self.dim)


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
