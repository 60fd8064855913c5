# Level 1 task: hinge loss mean(clamp(1 - predictions * targets, min=0)), (8192, 8192) float32 with +-1
#   targets (scalar output).
import torch
import torch.nn as nn

batch_size = 8192
dim = 8192


class Model(nn.Module):
    """Computes the mean hinge loss for labels in {-1, +1}."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


def get_inputs():
    predictions = torch.randn(batch_size, dim) * (0.5 + 2 * torch.rand(1))
    targets = torch.randint(0, 2, (batch_size, dim)).float() * 2 - 1
    return [predictions, targets]


def get_init_inputs():
    return []
