# expect: REJECTED
# Adversarial (kernelbench, CPU): computes the softmax in place in its input and returns the input
# (no allocation, so faster), overwriting a read-only input. Caught by the PyTorch operator audit
# (it computes with torch operators); with --allow-torch-ops, by the byte-for-byte input check
# (WRONG_OUTPUT; the host corpus's mutates_input.cpp tests that without the audit).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x.sub_(x.amax(dim=1, keepdim=True)).exp_()
        return x.div_(x.sum(dim=1, keepdim=True))
