# Level 2 task: Linear(4096->2048) -> Mish -> GroupNorm(16 groups) -> * 0.5 -> + residual (main-op output) -> clamp(-1.5, 1.5).
# Sizes: x (2048, 4096) -> output (2048, 2048) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2048
in_features = 4096
out_features = 2048
num_groups = 16
scale_factor = 0.5
clamp_min = -1.5
clamp_max = 1.5


class Model(nn.Module):
    """Linear(4096->2048), then Mish, GroupNorm(16 groups), * 0.5, + residual (main-op output), clamp(-1.5, 1.5)."""

    def __init__(self, in_features, out_features, num_groups, scale_factor, clamp_min, clamp_max):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.gn = nn.GroupNorm(num_groups, out_features)
        self.scale_factor = scale_factor
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        x = self.linear(x)
        residual = x
        x = F.mish(x)
        x = self.gn(x)
        x = x * self.scale_factor
        x = x + residual
        x = torch.clamp(x, min=self.clamp_min, max=self.clamp_max)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, num_groups, scale_factor, clamp_min, clamp_max]
