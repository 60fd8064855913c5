# Level 2 task: Linear(1024->8192) -> / 0.5 -> LogSoftmax over features.
# Sizes: x (2048, 1024) -> output (2048, 8192) (float32).
import torch
import torch.nn as nn

batch_size = 2048
in_features = 1024
out_features = 8192
divisor = 0.5


class Model(nn.Module):
    """Linear(1024->8192), then / 0.5, LogSoftmax over features."""

    def __init__(self, in_features, out_features, divisor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor

    def forward(self, x):
        x = self.linear(x)
        x = x / self.divisor
        x = torch.log_softmax(x, dim=1)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, divisor]
