# expect: WRONG_OUTPUT
# Adversarial (kernelbench, CPU): at import it replaces torch.softmax (which the task's Model.forward
# calls) with a function returning zeros, then returns zeros itself: a reference run in the same
# interpreter after the candidate would agree. The candidate runs in a process of its own, so the
# patch reaches only its own interpreter: the true softmax is compared with its zeros. (In the
# in-child baseline, --kernelbench-in-child, the tamper guard refuses it: REJECTED.)
import torch
import torch.nn as nn
import torch.nn.functional as F


def _zeros(x, *args, **kwargs):
    return torch.zeros_like(x)


torch.softmax = _zeros
torch.Tensor.softmax = _zeros
F.softmax = _zeros


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.zeros_like(x)
