# expect: REJECTED
# Adversarial (kernelbench, CPU; tests the operator record below Python): forward is the reference's
# own torch.softmax, dispatched with the Python dispatch key excluded, so that no TorchDispatchMode
# (an operator audit written in Python) sees aten::_softmax. The guard is spelt
# torch._C.ExcludeDispatchKeyGuard in torch 1.13, a plain object that excludes the key while it lives
# (not a context manager there), and torch._C._ExcludeDispatchKeyGuard, a context manager, in torch 2;
# the candidate picks by `dir` (no getattr, no try). No static rule names either spelling.
# Why it fails now: the kernelbench runner records every call's operators with an
# at::RecordFunction global callback, which sees aten::softmax and aten::_softmax whatever the
# dispatch keys (checked with torch 1.13: a TorchDispatchMode sees nothing under the guard, the
# profiler's RecordFunction events list aten::softmax, aten::_softmax): under `strict`, an operator
# beyond allocation, views, copies and fills is REJECTED. One layer thinner (the audit a dispatch mode)
# it scored OK: the reference's own operator, unseen.
import torch
import torch.nn as nn

_PYTHON_KEY = torch._C.DispatchKeySet(torch._C.DispatchKey.Python)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if "ExcludeDispatchKeyGuard" in dir(torch._C):  # torch 1.13
            guard = torch._C.ExcludeDispatchKeyGuard(_PYTHON_KEY)
            y = torch.softmax(x, dim=1)
            del guard
            return y
        with torch._C._ExcludeDispatchKeyGuard(_PYTHON_KEY):
            return torch.softmax(x, dim=1)
