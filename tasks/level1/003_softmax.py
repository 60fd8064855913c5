# Level 1 task: softmax over dim=1 of a (4096, 32768) float32 tensor (long rows).
import torch
import torch.nn as nn

batch_size = 4096
dim = 32768


class Model(nn.Module):
    """Applies softmax over the feature dimension."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
