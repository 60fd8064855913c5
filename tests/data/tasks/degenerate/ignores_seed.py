# Degenerate task: its inputs do not depend on the seed, so neither does the output (check must fail it).
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.arange(64 * 64, dtype=torch.float32).reshape(64, 64) / 100.0]


def get_init_inputs():
    return []
