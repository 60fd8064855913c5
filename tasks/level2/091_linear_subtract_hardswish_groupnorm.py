# Level 2 task: Linear(2048->8192) -> - 0.2 -> HardSwish -> GroupNorm(64 groups).
# Sizes: x (1024, 2048) -> output (1024, 8192) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
in_features = 2048
out_features = 8192
subtract_value = 0.2
num_groups = 64


class Model(nn.Module):
    """Linear(2048->8192), then - 0.2, HardSwish, GroupNorm(64 groups)."""

    def __init__(self, in_features, out_features, subtract_value, num_groups):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.subtract_value = subtract_value
        self.gn = nn.GroupNorm(num_groups, out_features)

    def forward(self, x):
        x = self.linear(x)
        x = x - self.subtract_value
        x = F.hardswish(x)
        x = self.gn(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, subtract_value, num_groups]
