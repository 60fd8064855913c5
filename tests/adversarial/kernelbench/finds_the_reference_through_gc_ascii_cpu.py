# expect: WRONG_OUTPUT
# Adversarial (kernelbench, CPU; tests that the runner holds no reference; run with the scan off):
# finds_the_reference_through_gc_cpu.py with `gc` spelt in ASCII, so that, with the system-access
# check off (EngineConfig::system_access_check = false; the non-ASCII rule is not part of that check
# and would refuse the fullwidth spelling even then), it reaches run time. It looks for the task's
# reference instance among the interpreter's objects (type name "Model") and returns the reference's
# own output on x; with no such instance it returns zeros.
# Why it fails now: the candidate runs in the kernelbench runner, which never builds the reference:
# no instance, zeros, WRONG_OUTPUT. (Had it found one, calling it would dispatch aten::_softmax in
# the candidate's call: REJECTED by the operator record.) With the scan on, `gc` is refused at build
# (REJECTED). One layer thinner (the candidate in the evaluating process, operator audit off as under
# `--rules kernelbench` with a kernel of its own) it returned the reference's own answer: OK.
import gc

import torch
import torch.nn as nn


def _reference_instance():
    for obj in gc.get_objects():
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
