# expect: WRONG_OUTPUT
# Adversarial (kernelbench, CPU; tests that the candidate runs apart from the reference): at import it
# registers, through torch.library, its own CPU kernel for aten::_softmax that returns zeros, then
# returns zeros itself. No Python name of torch changes (the tamper guard compares torch's namespaces,
# and this patch lives in the dispatcher below them), no import beyond torch, no `try`, no `getattr`:
# it passes every static rule. In a shared interpreter the reference's torch.softmax would dispatch
# to the candidate's kernel and agree with it (checked with torch 1.13: after the import,
# torch.softmax(torch.randn(4, 8), 1) is all zeros).
# Why it fails now: the candidate runs in its own process (the kernelbench runner), the reference in
# the evaluating child, whose dispatcher the registration never reaches: zeros against the true
# softmax, WRONG_OUTPUT (its own call dispatches only aten::zeros_like, which the operator record
# allows). One layer thinner (the candidate imported into the evaluating process) it scored OK.
import torch
import torch.nn as nn


def _zeros_softmax(x, dim, half_to_float):
    return torch.zeros_like(x)


_lib = torch.library.Library("aten", "IMPL")
_lib.impl("_softmax", _zeros_softmax, "CPU")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.zeros_like(x)
