# Level 1 task: exclusive prefix sum over dim=1 of a (4096, 32768) float32 tensor (first column 0).
import torch
import torch.nn as nn

batch_size = 4096
dim = 32768


class Model(nn.Module):
    """Computes y[:, j] = sum of x[:, :j] (the element itself excluded)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shifted = torch.cat([torch.zeros_like(x[:, :1]), x[:, :-1]], dim=1)
        return torch.cumsum(shifted, dim=1)


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
