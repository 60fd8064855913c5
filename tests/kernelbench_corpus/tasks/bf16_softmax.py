# Corpus-local task (KernelBench style: get_inputs() returns CUDA tensors): row softmax of a
# (4096, 8192) bfloat16 matrix; PyTorch accumulates in float32 and rounds the output to bfloat16.
import torch
import torch.nn as nn

batch_size = 4096
dim = 8192


class Model(nn.Module):
    """Softmax over the last dimension of a bfloat16 tensor."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    x = torch.randn(batch_size, dim, device="cuda", dtype=torch.bfloat16) * 3
    return [x]


def get_init_inputs():
    return []
