# expect: OK (known gap: see adversarial.json and README.md)
# Adversarial (kernelbench, CPU): module-level code runs a shell command (in the compile pool, and
# again when the evaluating child imports the module, before its syscall filter is installed),
# then ModelNew is a correct softmax.
import subprocess

import torch
import torch.nn as nn

subprocess.run(["sh", "-c", "echo pwned > /dev/null"], check=True)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)
