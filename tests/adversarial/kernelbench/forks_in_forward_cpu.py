# expect: REJECTED
# Adversarial (kernelbench, CPU): a correct softmax, but forward forks a helper process (after import,
# so the syscall filter is in place). Caught before building: the format rules allow no `os`
# (compile/python_scan.hpp); the syscall filter behind them is host/spawns_processes.cpp's.
import os

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        return torch.softmax(x, dim=1)
