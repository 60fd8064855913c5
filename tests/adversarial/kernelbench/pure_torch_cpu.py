# expect: REJECTED
# Adversarial (kernelbench, CPU): no custom kernel at all; forward is the same PyTorch call as the
# reference, so any "speedup" is noise. Caught by the PyTorch operator audit (eval/op_audit.hpp):
# aten::_softmax is not among what a candidate may call.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)
