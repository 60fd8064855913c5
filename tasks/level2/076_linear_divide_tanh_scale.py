# Level 2 task: Linear(8192->1024) -> / 0.5 -> Tanh -> * 2.0.
# Sizes: x (2048, 8192) -> output (2048, 1024) (float32).
import torch
import torch.nn as nn

batch_size = 2048
in_features = 8192
out_features = 1024
divisor = 0.5
scale_factor = 2.0


class Model(nn.Module):
    """Linear(8192->1024), then / 0.5, Tanh, * 2.0."""

    def __init__(self, in_features, out_features, divisor, scale_factor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.linear(x)
        x = x / self.divisor
        x = torch.tanh(x)
        x = x * self.scale_factor
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, divisor, scale_factor]
