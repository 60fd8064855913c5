# Level 1 task: smooth L1 (Huber, beta 1) loss between two (8192, 8192) float32 tensors (scalar output).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
dim = 8192


class Model(nn.Module):
    """Computes the mean smooth L1 loss (quadratic below |d| = 1, linear above)."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.smooth_l1_loss(predictions, targets)


def get_inputs():
    predictions = torch.randn(batch_size, dim)
    targets = torch.randn(batch_size, dim) * (0.25 + 2 * torch.rand(1))
    return [predictions, targets]


def get_init_inputs():
    return []
