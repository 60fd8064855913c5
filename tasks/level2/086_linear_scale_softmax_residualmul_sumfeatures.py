# Level 2 task: Linear(4096->4096) -> * 4.0 -> Softmax over features -> * residual (main-op output) -> sum over features.
# Sizes: x (1024, 4096) -> output (1024, 1) (float32).
import torch
import torch.nn as nn

batch_size = 1024
in_features = 4096
out_features = 4096
scale_factor = 4.0


class Model(nn.Module):
    """Linear(4096->4096), then * 4.0, Softmax over features, * residual (main-op output), sum over features."""

    def __init__(self, in_features, out_features, scale_factor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.linear(x)
        residual = x
        x = x * self.scale_factor
        x = torch.softmax(x, dim=1)
        x = x * residual
        x = torch.sum(x, dim=1, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, scale_factor]
