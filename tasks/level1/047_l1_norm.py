# Level 1 task: L1 normalization of the rows of a (8192, 16384) float32 tensor, x / mean(|x|, dim=1).
import torch
import torch.nn as nn

batch_size = 8192
dim = 16384


class Model(nn.Module):
    """Divides every row by its mean absolute value (L1 norm over the row length, so outputs stay O(1))."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.mean(torch.abs(x), dim=1, keepdim=True)


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
