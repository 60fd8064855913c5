# Level 2 task: Linear(2048->4096) -> - 0.5 -> Sigmoid -> * input gate -> sum over features.
# Sizes: x (2048, 2048), gate (2048, 4096) -> output (2048, 1) (float32).
import torch
import torch.nn as nn

batch_size = 2048
in_features = 2048
out_features = 4096
subtract_value = 0.5


class Model(nn.Module):
    """Linear(2048->4096), then - 0.5, Sigmoid, * input gate, sum over features."""

    def __init__(self, in_features, out_features, subtract_value):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.subtract_value = subtract_value

    def forward(self, x, gate):
        x = self.linear(x)
        x = x - self.subtract_value
        x = torch.sigmoid(x)
        x = x * gate
        x = torch.sum(x, dim=1, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    gate = torch.randn(batch_size, out_features)
    return [x, gate]


def get_init_inputs():
    return [in_features, out_features, subtract_value]
