# Level 1 task: nn.Linear(4096, 4096) with bias on x (2048, 4096) (params: weight, bias).
import torch
import torch.nn as nn

batch_size = 2048
in_features = 4096
out_features = 4096


class Model(nn.Module):
    """Applies a fully connected layer, y = x @ W.T + b."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
