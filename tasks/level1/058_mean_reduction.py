# Level 1 task: mean over dim=1 of a (64, 256, 8192) float32 tensor.
import torch
import torch.nn as nn

batch_size = 64
dim1 = 256
dim2 = 8192
reduce_dim = 1


class Model(nn.Module):
    """Averages over one dimension."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(x, dim=self.dim)


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
