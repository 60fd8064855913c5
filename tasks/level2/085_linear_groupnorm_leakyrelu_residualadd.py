# Level 2 task: Linear(4096->1024) -> GroupNorm(16 groups) -> LeakyReLU(0.1) -> + residual (main-op output).
# Sizes: x (4096, 4096) -> output (4096, 1024) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
in_features = 4096
out_features = 1024
num_groups = 16
negative_slope = 0.1


class Model(nn.Module):
    """Linear(4096->1024), then GroupNorm(16 groups), LeakyReLU(0.1), + residual (main-op output)."""

    def __init__(self, in_features, out_features, num_groups, negative_slope):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.gn = nn.GroupNorm(num_groups, out_features)
        self.negative_slope = negative_slope

    def forward(self, x):
        x = self.linear(x)
        residual = x
        x = self.gn(x)
        x = F.leaky_relu(x, negative_slope=self.negative_slope)
        x = x + residual
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, num_groups, negative_slope]
