# expect: RUNTIME_ERROR
# Ladder (kernelbench, CPU): forward raises an exception.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        raise RuntimeError("kernel launch failed (ladder: forward always raises)")
