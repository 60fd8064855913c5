# expect: REJECTED
# Adversarial (kernelbench, CPU): module-level code runs a shell command, then ModelNew is a correct
# softmax. Caught before building (the prebuild, which must start compilers, runs module-level code
# outside the sandbox): the format rules allow no `subprocess` (compile/python_scan.hpp); behind
# them, the evaluating child imports the module under its syscall filter.
import subprocess

import torch
import torch.nn as nn

subprocess.run(["sh", "-c", "echo pwned > /dev/null"], check=True)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)
