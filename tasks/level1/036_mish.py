# Level 1 task: elementwise Mish x * tanh(softplus(x)) on a (128, 1024, 1024) float32 tensor.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
seq_len = 1024
hidden = 1024


class Model(nn.Module):
    """Applies the Mish activation."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.mish(x)


def get_inputs():
    x = torch.randn(batch_size, seq_len, hidden)
    return [x]


def get_init_inputs():
    return []
