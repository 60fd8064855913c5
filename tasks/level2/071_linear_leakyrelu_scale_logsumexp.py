# Level 2 task: Linear(8192->4096) -> LeakyReLU(0.1) -> * 8.0 -> logsumexp over features.
# Sizes: x (512, 8192) -> output (512, 1) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 512
in_features = 8192
out_features = 4096
negative_slope = 0.1
scale_factor = 8.0


class Model(nn.Module):
    """Linear(8192->4096), then LeakyReLU(0.1), * 8.0, logsumexp over features."""

    def __init__(self, in_features, out_features, negative_slope, scale_factor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.negative_slope = negative_slope
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.linear(x)
        x = F.leaky_relu(x, negative_slope=self.negative_slope)
        x = x * self.scale_factor
        x = torch.logsumexp(x, dim=1, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, negative_slope, scale_factor]
