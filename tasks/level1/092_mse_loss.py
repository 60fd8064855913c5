# Level 1 task: mean squared error between two (8192, 8192) float32 tensors (scalar output).
import torch
import torch.nn as nn

batch_size = 8192
dim = 8192


class Model(nn.Module):
    """Computes mean((predictions - targets) ** 2)."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean((predictions - targets) ** 2)


def get_inputs():
    # A random target scale per draw, so that the loss value changes with the seed.
    predictions = torch.randn(batch_size, dim)
    targets = torch.randn(batch_size, dim) * (0.5 + torch.rand(1))
    return [predictions, targets]


def get_init_inputs():
    return []
