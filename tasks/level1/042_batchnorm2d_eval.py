# Level 1 task: nn.BatchNorm2d(64) in eval mode (running statistics) on a (16, 64, 256, 512) float32 tensor
#   (params: weight, bias, running_mean, running_var, num_batches_tracked).
import torch
import torch.nn as nn

batch_size = 16
features = 64
height = 256
width = 512


class Model(nn.Module):
    """Applies batch normalization with stored running statistics, in any module mode."""

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
        # The running statistics whatever the module's mode (the engine evaluates models in eval
        # mode, KernelBench's harness in training mode, where self.bn(x) would use the batch's).
        bn = self.bn
        return nn.functional.batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, training=False, eps=bn.eps)


def get_inputs():
    x = torch.randn(batch_size, features, height, width)
    return [x]


def get_init_inputs():
    return [features]
