# Published-style "solution" for tasks/level1/035_softsign.py: torch-level only (no load_inline):
# the denominator built in place on a temporary, then one division. Values equal the reference's
# up to rounding order. Expected: strict REJECTED (PyTorch compute operators), kernelbench REJECTED
# (never calls load_inline).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        denom = x.abs().add_(1.0)  # in place on a temporary: saves one allocation
        return torch.div(x, denom)
