# Level 2 task: Linear(2048->4096) -> AvgPool1d(4) over features -> SiLU -> LayerNorm(out_features // 4).
# Sizes: x (2048, 2048) -> output (2048, 1024) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2048
in_features = 2048
out_features = 4096
pool_kernel_size = 4
normalized_shape = out_features // 4


class Model(nn.Module):
    """Linear(2048->4096), then AvgPool1d(4) over features, SiLU, LayerNorm(out_features // 4)."""

    def __init__(self, in_features, out_features, pool_kernel_size, normalized_shape):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.pool = nn.AvgPool1d(pool_kernel_size)
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x):
        x = self.linear(x)
        x = self.pool(x.unsqueeze(1)).squeeze(1)
        x = F.silu(x)
        x = self.ln(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, pool_kernel_size, normalized_shape]
