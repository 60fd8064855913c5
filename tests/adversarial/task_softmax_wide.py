# Adversarial-corpus task (CPU, fast): softmax over dim=1 of a (16, 4096) float32 matrix. Every
# output is about 1/4096, far under the absolute tolerance, so only a whole-output check can tell
# zeros from the right answer.
import torch
import torch.nn as nn

ROWS = 16
COLS = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(ROWS, COLS) * 0.5]


def get_init_inputs():
    return []
