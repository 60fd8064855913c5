# Level 2 task: Linear(1024->2048) -> GroupNorm(32 groups) -> HardSwish -> * 2.0.
# Sizes: x (8192, 1024) -> output (8192, 2048) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
in_features = 1024
out_features = 2048
num_groups = 32
scale_factor = 2.0


class Model(nn.Module):
    """Linear(1024->2048), then GroupNorm(32 groups), HardSwish, * 2.0."""

    def __init__(self, in_features, out_features, num_groups, scale_factor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.gn = nn.GroupNorm(num_groups, out_features)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.linear(x)
        x = self.gn(x)
        x = F.hardswish(x)
        x = x * self.scale_factor
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, num_groups, scale_factor]
