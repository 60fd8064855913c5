# Level 2 task: Linear(8192->2048) -> Tanh -> * learned multiplier -> sum over features.
# Sizes: x (1024, 8192) -> output (1024, 1) (float32).
import torch
import torch.nn as nn

batch_size = 1024
in_features = 8192
out_features = 2048
multiplier_shape = (out_features,)


class Model(nn.Module):
    """Linear(8192->2048), then Tanh, * learned multiplier, sum over features."""

    def __init__(self, in_features, out_features, multiplier_shape):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.multiplier = nn.Parameter(1.0 + 0.1 * torch.randn(multiplier_shape))

    def forward(self, x):
        x = self.linear(x)
        x = torch.tanh(x)
        x = x * self.multiplier
        x = torch.sum(x, dim=1, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, multiplier_shape]
