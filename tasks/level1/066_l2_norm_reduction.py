# Level 1 task: Euclidean norm over dim=1 of a (16, 2048, 4096) float32 tensor.
import torch
import torch.nn as nn

batch_size = 16
dim1 = 2048
dim2 = 4096
reduce_dim = 1


class Model(nn.Module):
    """Computes the L2 norm along one dimension."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.linalg.vector_norm(x, ord=2, dim=self.dim)


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
