# Level 2 task: Linear(2048->2048) -> BatchNorm1d (batch statistics, as in training mode) -> Tanh.
# Sizes: x (4096, 2048) -> output (4096, 2048) (float32).
import torch
import torch.nn as nn

batch_size = 4096
in_features = 2048
out_features = 2048


class Model(nn.Module):
    """Linear(2048->2048), then BatchNorm1d (batch statistics, as in training mode), Tanh."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        # Batch statistics whatever the module's mode (the engine evaluates models in eval mode,
        # KernelBench's harness in training mode): no running buffers to fall back on.
        self.bn = nn.BatchNorm1d(out_features, track_running_stats=False)

    def forward(self, x):
        x = self.linear(x)
        x = self.bn(x)
        x = torch.tanh(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
