# Level 1 task: RMS normalization (eps 1e-5) over the channel dim (dim=1) of a (16, 64, 256, 512) float32
#   tensor.
import torch
import torch.nn as nn

batch_size = 16
features = 64
height = 256
width = 512
eps = 1e-5


class Model(nn.Module):
    """Divides by the root mean square across channels at every spatial position."""

    def __init__(self, eps: float):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.sqrt(torch.mean(x * x, dim=1, keepdim=True) + self.eps)
        return x / rms


def get_inputs():
    x = torch.randn(batch_size, features, height, width)
    return [x]


def get_init_inputs():
    return [eps]
