# Level 2 task: Linear(4096->4096) -> GELU -> LayerNorm(last dim).
# Sizes: x (1024, 4096) -> output (1024, 4096) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
in_features = 4096
out_features = 4096


class Model(nn.Module):
    """Linear(4096->4096), then GELU, LayerNorm(last dim)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.ln = nn.LayerNorm(out_features)

    def forward(self, x):
        x = self.linear(x)
        x = F.gelu(x)
        x = self.ln(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
