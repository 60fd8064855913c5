# Published-style "solution" for tasks/level1/037_relu6.py: torch-level only (no load_inline), a single
# clamp instead of F.relu6 (hardtanh). Exact. Expected: strict REJECTED, kernelbench REJECTED (never
# calls load_inline).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(x, min=0.0, max=6.0)
