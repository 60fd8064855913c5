# Level 2 task: Linear(2048->2048) -> MaxPool1d(4) over features -> GELU -> * 2.0.
# Sizes: x (4096, 2048) -> output (4096, 512) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
in_features = 2048
out_features = 2048
pool_kernel_size = 4
scale_factor = 2.0


class Model(nn.Module):
    """Linear(2048->2048), then MaxPool1d(4) over features, GELU, * 2.0."""

    def __init__(self, in_features, out_features, pool_kernel_size, scale_factor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.pool = nn.MaxPool1d(pool_kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.linear(x)
        x = self.pool(x.unsqueeze(1)).squeeze(1)
        x = F.gelu(x)
        x = x * self.scale_factor
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, pool_kernel_size, scale_factor]
