# Level 1 task: elementwise ReLU on a (4096, 32768) float32 tensor (128M elements).
import torch
import torch.nn as nn

batch_size = 4096
dim = 32768


class Model(nn.Module):
    """Applies a ReLU activation."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
