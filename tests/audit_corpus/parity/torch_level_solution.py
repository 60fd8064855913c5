# Parity corpus: torch_level_solution.py -- task tasks/level1/002_relu.py (x (4096, 32768) float32).
# Tests: a "solution" that only rearranges PyTorch calls (no load_inline, no kernel of its own):
# clamp_min(0) instead of relu, the way some published solution sets count a torch rewrite as a
# kernel. The output is exact.
# Expected: strict REJECTED (PyTorch compute operator aten::clamp_min in forward, no own kernel),
# kernelbench REJECTED ("never calls load_inline": KernelBench's backend requirement),
# observe REJECTED (same requirement).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # "Optimized": clamp_min avoids the extra comparison mask of relu
        return x.clamp_min(0.0)
