# Level 1 task: cosine similarity loss mean(1 - cos(p, t)) over rows of two (32768, 2048) float32 tensors
#   (scalar output).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32768
dim = 2048


class Model(nn.Module):
    """Computes the mean of 1 - cosine similarity between corresponding rows."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        cosine = F.cosine_similarity(predictions, targets, dim=1)
        return torch.mean(1 - cosine)


def get_inputs():
    # Targets are noisy copies of the predictions; the noise level is drawn per seed.
    predictions = torch.randn(batch_size, dim)
    targets = predictions + (0.5 + 2 * torch.rand(1)) * torch.randn(batch_size, dim)
    return [predictions, targets]


def get_init_inputs():
    return []
