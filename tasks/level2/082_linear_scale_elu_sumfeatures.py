# Level 2 task: Linear(1024->4096) -> * 2.0 -> ELU -> sum over features.
# Sizes: x (4096, 1024) -> output (4096, 1) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
in_features = 1024
out_features = 4096
scale_factor = 2.0


class Model(nn.Module):
    """Linear(1024->4096), then * 2.0, ELU, sum over features."""

    def __init__(self, in_features, out_features, scale_factor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.linear(x)
        x = x * self.scale_factor
        x = F.elu(x)
        x = torch.sum(x, dim=1, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, scale_factor]
