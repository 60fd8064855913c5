# Level 1 task: KL divergence kl_div(log(p), q, 'batchmean') between two (16384, 4096) float32 row
#   distributions (scalar output).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16384
num_classes = 4096


class Model(nn.Module):
    """Computes the batch-mean KL divergence KL(q || p) from probabilities p (predictions) and q (targets)."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.kl_div(torch.log(predictions), targets, reduction="batchmean")


def get_inputs():
    scale = 0.5 + 2 * torch.rand(1)
    predictions = torch.softmax(torch.randn(batch_size, num_classes) * scale, dim=1)
    targets = torch.softmax(torch.randn(batch_size, num_classes), dim=1)
    return [predictions, targets]


def get_init_inputs():
    return []
