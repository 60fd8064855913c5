# expect: REJECTED
# Adversarial (kernelbench, CPU): at import it registers a global module forward hook that makes
# every module's forward return its first input, so the task's Model (softmax) answers x; ModelNew
# runs no kernel and returns a copy of x, which would then agree. It touches no name of torch's
# namespaces, so the tamper guard's snapshot would not see it. Caught by the format rule on global
# module hooks (compile/python_scan.hpp); behind it, the tamper guard names any registered global
# hook before every check.
import torch
import torch.nn as nn


def _identity(module, args, output):
    return args[0]


torch.nn.modules.module.register_module_forward_hook(_identity)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.clone()
