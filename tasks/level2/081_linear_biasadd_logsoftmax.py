# Level 2 task: Linear(512->1024) -> + learned bias -> LogSoftmax over features.
# Sizes: x (16384, 512) -> output (16384, 1024) (float32).
import torch
import torch.nn as nn

batch_size = 16384
in_features = 512
out_features = 1024
bias_shape = (out_features,)


class Model(nn.Module):
    """Linear(512->1024), then + learned bias, LogSoftmax over features."""

    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, x):
        x = self.linear(x)
        x = x + self.bias
        x = torch.log_softmax(x, dim=1)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
