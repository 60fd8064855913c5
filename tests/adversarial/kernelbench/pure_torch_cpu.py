# expect: OK (known gap: see adversarial.json and README.md)
# Adversarial (kernelbench, CPU): no custom kernel at all; forward is the same PyTorch call as the
# reference, so any "speedup" is noise.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)
