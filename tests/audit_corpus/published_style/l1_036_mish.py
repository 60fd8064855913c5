# Published-style "solution" for tasks/level1/036_mish.py: torch-level only (no load_inline), Mish as
# the composite x * tanh(softplus(x)) with in-place ops on temporaries. Differs from F.mish by
# float rounding only (~1e-7). Expected: strict REJECTED, kernelbench REJECTED (never calls
# load_inline).
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softplus(x).tanh_().mul_(x)
