# expect: REJECTED
# Adversarial (kernelbench, CPU): at import it turns TF32 on for the whole process, so the reference
# (which runs in the same interpreter) computes its matmuls in TF32 too and a candidate downcasting
# the same way agrees with it. On the CPU the flag changes nothing; the change itself is refused.
import torch
import torch.nn as nn

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)
