# Level 2 task: torch.bmm -> / 32.0 -> + input skip -> ReLU -> LayerNorm(n).
# Sizes: a (16, 2048, 1024), b (16, 1024, 512), skip (16, 2048, 512) -> output (16, 2048, 512) (float32).
import torch
import torch.nn as nn

batch_size = 16
m = 2048
k = 1024
n = 512
divisor = 32.0
normalized_shape = n


class Model(nn.Module):
    """torch.bmm, then / 32.0, + input skip, ReLU, LayerNorm(n)."""

    def __init__(self, divisor, normalized_shape):
        super().__init__()
        self.divisor = divisor
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, a, b, skip):
        x = torch.bmm(a, b)
        x = x / self.divisor
        x = x + skip
        x = torch.relu(x)
        x = self.ln(x)
        return x


def get_inputs():
    a = torch.randn(batch_size, m, k)
    b = torch.randn(batch_size, k, n)
    skip = torch.randn(batch_size, m, n)
    return [a, b, skip]


def get_init_inputs():
    return [divisor, normalized_shape]
