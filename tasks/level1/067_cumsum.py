# Level 1 task: inclusive prefix sum (cumsum) over dim=1 of a (8192, 16384) float32 tensor.
import torch
import torch.nn as nn

batch_size = 8192
dim = 16384
scan_dim = 1


class Model(nn.Module):
    """Computes the cumulative sum along one dimension."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=self.dim)


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [scan_dim]
