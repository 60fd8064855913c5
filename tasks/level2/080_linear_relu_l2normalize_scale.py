# Level 2 task: Linear(16384->4096) -> ReLU -> L2-normalize over features -> * 64.0.
# Sizes: x (256, 16384) -> output (256, 4096) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 256
in_features = 16384
out_features = 4096
scale_factor = 64.0


class Model(nn.Module):
    """Linear(16384->4096), then ReLU, L2-normalize over features, * 64.0."""

    def __init__(self, in_features, out_features, scale_factor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.linear(x)
        x = torch.relu(x)
        x = F.normalize(x, p=2.0, dim=1)
        x = x * self.scale_factor
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, scale_factor]
