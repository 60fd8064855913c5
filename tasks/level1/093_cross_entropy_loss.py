# Level 1 task: cross-entropy loss of (32768, 4096) float32 logits against int64 class indices
#   (scalar output).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32768
num_classes = 4096


class Model(nn.Module):
    """Computes the mean cross-entropy of logits against target class indices."""

    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, targets)


def get_inputs():
    # A random logit scale (temperature) per draw, so that the loss value changes with the seed.
    logits = torch.randn(batch_size, num_classes) * (1 + 3 * torch.rand(1))
    targets = torch.randint(0, num_classes, (batch_size,))
    return [logits, targets]


def get_init_inputs():
    return []
