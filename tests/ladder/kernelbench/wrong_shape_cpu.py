# expect: WRONG_OUTPUT
# Ladder (kernelbench, CPU): returns the softmax of x.t(), shape (COLS, ROWS) instead of (ROWS, COLS).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x.t(), dim=1)  # BUG: transposed, wrong shape
