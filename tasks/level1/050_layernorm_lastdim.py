# Level 1 task: nn.LayerNorm(16384) over the last dim of a (8192, 16384) float32 tensor
#   (params: weight, bias).
import torch
import torch.nn as nn

batch_size = 8192
dim = 16384


class Model(nn.Module):
    """Applies layer normalization over each row."""

    def __init__(self, dim: int):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    x = torch.randn(batch_size, dim) * 2 - 1
    return [x]


def get_init_inputs():
    return [dim]
