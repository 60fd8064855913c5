# Task: softmax over dim=1 of a (4096, 8192) float32 matrix (row-wise reduction, memory bound).
import torch
import torch.nn as nn

ROWS = 4096
COLS = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
