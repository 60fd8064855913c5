# Level 1 task: nn.BatchNorm2d(64) in eval mode (running statistics) on a (16, 64, 256, 512) float32 tensor
#   (params: weight, bias, running_mean, running_var, num_batches_tracked).
import torch
import torch.nn as nn

batch_size = 16
features = 64
height = 256
width = 512


class Model(nn.Module):
    """Applies batch normalization with stored running statistics (the engine runs the model in eval mode)."""

    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features)
        # Non-trivial affine parameters and running statistics, drawn when the model is built.
        with torch.no_grad():
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)


def get_inputs():
    x = torch.randn(batch_size, features, height, width)
    return [x]


def get_init_inputs():
    return [features]
