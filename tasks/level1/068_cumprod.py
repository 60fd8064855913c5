# Level 1 task: cumulative product over dim=1 of a (16384, 8192) float32 tensor with entries near 1.
import torch
import torch.nn as nn

batch_size = 16384
dim = 8192
scan_dim = 1


class Model(nn.Module):
    """Computes the cumulative product along one dimension."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(x, dim=self.dim)


def get_inputs():
    # Factors near 1 keep the running products in a moderate range over 8192 steps.
    x = 1 + 0.01 * torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [scan_dim]
