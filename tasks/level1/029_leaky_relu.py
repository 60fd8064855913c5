# Level 1 task: elementwise leaky ReLU (negative slope 0.01) on a (4096, 32768) float32 tensor.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 32768
negative_slope = 0.01


class Model(nn.Module):
    """Applies a leaky ReLU with a slope given at construction."""

    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(x, negative_slope=self.negative_slope)


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [negative_slope]
