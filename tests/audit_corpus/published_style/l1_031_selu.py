# Published-style "solution" for tasks/level1/031_selu.py: torch-level only (no load_inline): the
# x.mul_ trick, SELU as scale * elu(x, alpha) with the scale applied in place on the temporary.
# Expected: strict REJECTED, kernelbench REJECTED (never calls load_inline).
import torch
import torch.nn as nn
import torch.nn.functional as F

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.elu(x, alpha=SELU_ALPHA).mul_(SELU_SCALE)
