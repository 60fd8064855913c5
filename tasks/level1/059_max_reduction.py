# Level 1 task: max over the last dim of a (128, 1024, 1024) float32 tensor.
import torch
import torch.nn as nn

batch_size = 128
dim1 = 1024
dim2 = 1024
reduce_dim = 2


class Model(nn.Module):
    """Takes the maximum over one dimension (values only)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.max(x, dim=self.dim)[0]


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
