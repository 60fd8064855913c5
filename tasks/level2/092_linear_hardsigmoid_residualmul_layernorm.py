# Level 2 task: Linear(4096->8192) -> HardSigmoid -> * residual (main-op output) -> LayerNorm(last dim).
# Sizes: x (512, 4096) -> output (512, 8192) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 512
in_features = 4096
out_features = 8192


class Model(nn.Module):
    """Linear(4096->8192), then HardSigmoid, * residual (main-op output), LayerNorm(last dim)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.ln = nn.LayerNorm(out_features)

    def forward(self, x):
        x = self.linear(x)
        residual = x
        x = F.hardsigmoid(x)
        x = x * residual
        x = self.ln(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
