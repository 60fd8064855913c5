# expect: REJECTED
# Adversarial (kernelbench, CPU): computes once, then returns the first call's output (a clone) on
# every later call. Caught by the PyTorch operator audit (it computes with torch.softmax); with
# --allow-torch-ops, because every trial draws fresh inputs (WRONG_OUTPUT; the host corpus's
# caches_first_result.cpp tests that without the audit).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cached = None

    def forward(self, x):
        if self.cached is None:
            self.cached = torch.softmax(x, dim=1)
        return self.cached.clone()
