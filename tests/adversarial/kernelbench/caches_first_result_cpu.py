# expect: WRONG_OUTPUT
# Adversarial (kernelbench, CPU): computes once, then returns the first call's output (a clone) on
# every later call. Caught because every trial draws fresh inputs.
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
