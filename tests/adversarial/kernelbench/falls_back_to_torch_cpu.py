# expect: REJECTED (the kernelbench format rules: no try/except)
# Adversarial (kernelbench, CPU): "uses" a custom kernel that never loads (a library that does not
# exist) and wraps every call in try/except with a PyTorch fallback, so the kernel never runs and
# PyTorch does all the work.
import torch
import torch.nn as nn

try:
    torch.ops.load_library("libkernelrl_adversarial_softmax_kernel.so")  # never there
    custom_softmax = torch.ops.kernelrl_adversarial.softmax
except Exception:
    custom_softmax = None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        try:
            return custom_softmax(x)
        except Exception:
            return torch.softmax(x, dim=1)
