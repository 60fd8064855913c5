# Level 2 task: Linear(4096->4096) -> split in halves, GELU(first) * second -> LayerNorm(out_features // 2).
# Sizes: x (1024, 4096) -> output (1024, 2048) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
in_features = 4096
out_features = 4096
normalized_shape = out_features // 2


class Model(nn.Module):
    """Linear(4096->4096), then split in halves, GELU(first) * second, LayerNorm(out_features // 2)."""

    def __init__(self, in_features, out_features, normalized_shape):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x):
        x = self.linear(x)
        gate, value = x.chunk(2, dim=-1)
        x = F.gelu(gate) * value
        x = self.ln(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, normalized_shape]
