# Degenerate task: the output is nearly zero everywhere (check must fail it).
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * 1e-12


def get_inputs():
    return [torch.randn(64, 64)]


def get_init_inputs():
    return []
