# Level 1 task: nn.GroupNorm(8 groups, 64 channels) on a (16, 64, 256, 512) float32 tensor
#   (params: weight, bias).
import torch
import torch.nn as nn

batch_size = 16
features = 64
height = 256
width = 512
num_groups = 8


class Model(nn.Module):
    """Applies group normalization."""

    def __init__(self, num_groups: int, num_channels: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_channels)
        with torch.no_grad():
            self.gn.weight.uniform_(0.5, 1.5)
            self.gn.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


def get_inputs():
    x = torch.randn(batch_size, features, height, width)
    return [x]


def get_init_inputs():
    return [num_groups, features]
