# Level 2 task: Linear(4096->2048) -> Mish -> + input skip -> LayerNorm(last dim).
# Sizes: x (2048, 4096), skip (2048, 2048) -> output (2048, 2048) (float32).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2048
in_features = 4096
out_features = 2048


class Model(nn.Module):
    """Linear(4096->2048), then Mish, + input skip, LayerNorm(last dim)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.ln = nn.LayerNorm(out_features)

    def forward(self, x, skip):
        x = self.linear(x)
        x = F.mish(x)
        x = x + skip
        x = self.ln(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    skip = torch.randn(batch_size, out_features)
    return [x, skip]


def get_init_inputs():
    return [in_features, out_features]
