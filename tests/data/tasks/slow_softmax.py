# A task whose own work is slow (for tests of the scaled time limits, eval/time_limits.hpp): each
# draw of get_inputs() and each reference forward sleeps 0.25 s before a small row softmax.
import time

import torch
import torch.nn as nn

ROWS = 64
COLS = 256
SLEEP_S = 0.25


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        time.sleep(SLEEP_S)
        return torch.softmax(x, dim=1)


def get_inputs():
    time.sleep(SLEEP_S)
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
