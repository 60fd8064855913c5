# expect: REJECTED
# Adversarial (kernelbench, CPU): at import it replaces torch.softmax (which the task's Model.forward
# calls) with a function returning zeros, then returns zeros itself: the reference runs in the
# same interpreter after the candidate, so it would agree. Caught because the evaluation snapshots
# torch's namespaces before the import and compares them after it (eval/tamper_guard.hpp).
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
