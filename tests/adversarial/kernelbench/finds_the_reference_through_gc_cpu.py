# expect: REJECTED
# Adversarial (kernelbench, CPU; tests the static rule on non-ASCII code): imports the garbage
# collector's module spelt with fullwidth letters, `ｇｃ`, which Python reads in NFKC form as `gc`
# (no ASCII scan for `gc` matches it), finds the task's reference instance among the interpreter's
# objects (type name "Model") and returns the reference's own output on x; with no such instance it
# returns zeros.
# Why it fails now: code outside strings and comments must be ASCII (compile/python_scan.cpp): REJECTED
# at build, whatever the system-access check says. Behind it (its ASCII twin,
# finds_the_reference_through_gc_ascii_cpu.py, with the scan off): the runner holds no reference
# instance, zeros, WRONG_OUTPUT. One layer thinner (the candidate in the evaluating process, operator
# audit off as under `--rules kernelbench` with a kernel of its own) it returned the reference's own
# answer: OK.
import ｇｃ

import torch
import torch.nn as nn


def _reference_instance():
    for obj in ｇｃ.get_objects():
        if type(obj).__name__ == "Model" and isinstance(obj, nn.Module):
            return obj
    return None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        reference = _reference_instance()
        if reference is None:
            return torch.zeros_like(x)
        return reference(x)
