# Level 1 task: log_softmax over dim=1 of a (8192, 16384) float32 tensor.
import torch
import torch.nn as nn

batch_size = 8192
dim = 16384


class Model(nn.Module):
    """Applies log-softmax over the feature dimension."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=1)


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
