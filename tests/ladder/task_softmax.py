# Ladder task (GPU): softmax over dim=1 of a (2048, 4096) float32 matrix.
import torch
import torch.nn as nn

ROWS = 2048
COLS = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
