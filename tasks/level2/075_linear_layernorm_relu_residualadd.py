# Level 2 task: Linear(2048->2048) -> LayerNorm(last dim) -> ReLU -> + residual (main-op output).
# Sizes: x (16, 256, 2048) -> output (16, 256, 2048) (float32).
import torch
import torch.nn as nn

batch_size = 16
seq_len = 256
in_features = 2048
out_features = 2048


class Model(nn.Module):
    """Linear(2048->2048), then LayerNorm(last dim), ReLU, + residual (main-op output)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.ln = nn.LayerNorm(out_features)

    def forward(self, x):
        x = self.linear(x)
        residual = x
        x = self.ln(x)
        x = torch.relu(x)
        x = x + residual
        return x


def get_inputs():
    x = torch.randn(batch_size, seq_len, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
