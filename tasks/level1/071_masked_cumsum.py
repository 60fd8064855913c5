# Level 1 task: cumsum over dim=1 of x * mask, x (8192, 16384) float32 and a bool mask of the same shape.
import torch
import torch.nn as nn

batch_size = 8192
dim = 16384
scan_dim = 1


class Model(nn.Module):
    """Computes the cumulative sum of the entries where the mask is true."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x * mask, dim=self.dim)


def get_inputs():
    x = torch.randn(batch_size, dim)
    mask = torch.rand(batch_size, dim) > 0.5
    return [x, mask]


def get_init_inputs():
    return [scan_dim]
