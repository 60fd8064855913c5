# Level 1 task: elementwise softplus log(1 + exp(x)) on a (8192, 16384) float32 tensor.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
dim = 16384


class Model(nn.Module):
    """Applies softplus (beta 1, threshold 20)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softplus(x)


def get_inputs():
    x = torch.randn(batch_size, dim) * 4
    return [x]


def get_init_inputs():
    return []
