# Level 2 task: Linear(8192->8192) -> SiLU -> max over features.
# Sizes: x (128, 8192) -> output (128, 1) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_features = 8192
out_features = 8192


class Model(nn.Module):
    """Linear(8192->8192), then SiLU, max over features."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        x = self.linear(x)
        x = F.silu(x)
        x = torch.amax(x, dim=1, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
