# expect: REJECTED (the kernelbench format rules: ModelNew may not inherit or use the reference class)
# Adversarial (kernelbench, CPU): ModelNew subclasses a verbatim copy of the task's Model and calls
# super().forward, i.e. it runs the reference itself and claims it as a kernel.
import torch
import torch.nn as nn


class Model(nn.Module):  # the task's reference, copied from the prompt
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


class ModelNew(Model):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return super().forward(x)
