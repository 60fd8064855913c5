# Degenerate task: the output is the same constant whatever the input (check must fail it).
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x) + 3.0


def get_inputs():
    return [torch.randn(64, 64)]


def get_init_inputs():
    return []
