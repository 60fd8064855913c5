# expect: WRONG_OUTPUT
# Ladder (kernelbench, CPU): returns a (COLS, ROWS) tensor instead of (ROWS, COLS) (x transposed,
# made contiguous: only operators a kernelbench candidate may call, so the shape is what fails).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.t().contiguous()  # BUG: transposed, wrong shape
