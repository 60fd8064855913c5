# expect: REJECTED (the evaluating child imports the module under its syscall filter)
# Adversarial (kernelbench, CPU): module-level code runs a shell command, then ModelNew is a correct
# softmax. The prebuild (which must start compilers) still runs it once outside the sandbox.
import subprocess

import torch
import torch.nn as nn

subprocess.run(["sh", "-c", "echo pwned > /dev/null"], check=True)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)
