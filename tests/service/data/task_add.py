# Service test task (CPU, as cheap as a task gets): elementwise sum of two float32 vectors.
import torch
import torch.nn as nn

N = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return x + y


def get_inputs():
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs():
    return []
