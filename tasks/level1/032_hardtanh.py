# Level 1 task: elementwise hardtanh clamp to [-1, 1] on a (4096, 32768) float32 tensor.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 32768
min_val = -1.0
max_val = 1.0


class Model(nn.Module):
    """Clamps to [min_val, max_val] (hardtanh)."""

    def __init__(self, min_val: float, max_val: float):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardtanh(x, min_val=self.min_val, max_val=self.max_val)


def get_inputs():
    x = torch.randn(batch_size, dim) * 2
    return [x]


def get_init_inputs():
    return [min_val, max_val]
