# Level 2 task: Linear(2048->1024) -> + learned bias -> Mish -> Tanh -> * 2.0.
# Sizes: x (8192, 2048) -> output (8192, 1024) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
in_features = 2048
out_features = 1024
bias_shape = (out_features,)
scale_factor = 2.0


class Model(nn.Module):
    """Linear(2048->1024), then + learned bias, Mish, Tanh, * 2.0."""

    def __init__(self, in_features, out_features, bias_shape, scale_factor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.linear(x)
        x = x + self.bias
        x = F.mish(x)
        x = torch.tanh(x)
        x = x * self.scale_factor
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, bias_shape, scale_factor]
