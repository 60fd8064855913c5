# Level 2 task: Linear(2048->8192) -> Sigmoid -> * residual (main-op output) -> * 2.0.
# Sizes: x (1024, 2048) -> output (1024, 8192) (float32).
import torch
import torch.nn as nn

batch_size = 1024
in_features = 2048
out_features = 8192
scale_factor = 2.0


class Model(nn.Module):
    """Linear(2048->8192), then Sigmoid, * residual (main-op output), * 2.0."""

    def __init__(self, in_features, out_features, scale_factor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.linear(x)
        residual = x
        x = torch.sigmoid(x)
        x = x * residual
        x = x * self.scale_factor
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, scale_factor]
