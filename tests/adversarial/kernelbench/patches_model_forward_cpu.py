# expect: REJECTED
# Adversarial (kernelbench, CPU): at import it finds the task's Model class among the interpreter's
# objects and replaces its forward with one returning zeros, then returns zeros itself, so the
# reference, run after it in the same interpreter, agrees. Caught before building: the format rules
# allow no `gc` (compile/python_scan.hpp); behind them, the tamper guard (eval/tamper_guard.hpp).
import gc

import torch
import torch.nn as nn


def _zeros(self, x):
    return torch.zeros_like(x)


for _obj in gc.get_objects():
    if isinstance(_obj, type) and _obj.__name__ == "Model" and issubclass(_obj, nn.Module):
        _obj.forward = _zeros


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.zeros_like(x)
