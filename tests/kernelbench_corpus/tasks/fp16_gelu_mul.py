# Corpus-local task (KernelBench style: get_inputs() returns CUDA tensors): gated GELU in float16,
# gelu(x) * y for two (8192, 8192) half-precision matrices.
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 8192
cols = 8192


class Model(nn.Module):
    """Applies GELU to x and multiplies by the gate y (float16 in, float16 out)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.gelu(x) * y


def get_inputs():
    x = torch.randn(rows, cols).cuda().half()
    y = torch.randn(rows, cols).cuda().half()
    return [x, y]


def get_init_inputs():
    return []
