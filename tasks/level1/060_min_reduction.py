# Level 1 task: min over the leading dim (dim=0) of a (512, 512, 512) float32 tensor.
import torch
import torch.nn as nn

dim0 = 512
dim1 = 512
dim2 = 512
reduce_dim = 0


class Model(nn.Module):
    """Takes the minimum over the outermost dimension (values only)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.min(x, dim=self.dim)[0]


def get_inputs():
    x = torch.randn(dim0, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
