# Level 1 task: elementwise ELU (alpha 1.0) on a (8192, 16384) float32 tensor.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
dim = 16384
alpha = 1.0


class Model(nn.Module):
    """Applies the exponential linear unit."""

    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.elu(x, alpha=self.alpha)


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [alpha]
