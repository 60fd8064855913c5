# Level 2 task: Linear(2048->4096) -> split in halves, SiLU(first) * second -> * 2.0.
# Sizes: x (2048, 2048) -> output (2048, 2048) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2048
in_features = 2048
out_features = 4096
scale_factor = 2.0


class Model(nn.Module):
    """Linear(2048->4096), then split in halves, SiLU(first) * second, * 2.0."""

    def __init__(self, in_features, out_features, scale_factor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.linear(x)
        gate, value = x.chunk(2, dim=-1)
        x = F.silu(gate) * value
        x = x * self.scale_factor
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, scale_factor]
