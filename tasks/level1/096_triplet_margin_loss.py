# Level 1 task: nn.TripletMarginLoss(margin 5.0) on anchor, positive, negative (262144, 256) float32
#   (scalar output).
import torch
import torch.nn as nn

batch_size = 262144
dim = 256
margin = 5.0


class Model(nn.Module):
    """Computes mean(max(||a - p|| - ||a - n|| + margin, 0)) with Euclidean distances."""

    def __init__(self, margin: float):
        super().__init__()
        self.loss = nn.TripletMarginLoss(margin=margin)

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
        return self.loss(anchor, positive, negative)


def get_inputs():
    # Positives and negatives are noisy copies of the anchor; the negatives' noise level is drawn per seed.
    anchor = torch.randn(batch_size, dim)
    positive = anchor + 0.5 * torch.randn(batch_size, dim)
    negative = anchor + (0.25 + 0.5 * torch.rand(1)) * torch.randn(batch_size, dim)
    return [anchor, positive, negative]


def get_init_inputs():
    return [margin]
