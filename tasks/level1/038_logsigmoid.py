# Level 1 task: elementwise log-sigmoid on a (8192, 16384) float32 tensor.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
dim = 16384


class Model(nn.Module):
    """Applies log(sigmoid(x))."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.logsigmoid(x)


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
