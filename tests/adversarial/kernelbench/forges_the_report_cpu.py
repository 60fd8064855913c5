# expect: REJECTED
# Adversarial (kernelbench, CPU): host/forges_the_report.cpp in Python: forward writes a made-up
# final record (correct, 1000x speedup) to the report pipe (descriptor 3) and ends the process before
# the checker can say otherwise. It reaches os through torch (torch.os is the os module) so that no
# import names it. Caught before building: the format rules refuse `os` anywhere in the code
# (compile/python_scan.hpp).
import torch
import torch.nn as nn

RECORD = (b'{"result": {"status": "OK", "correct": true, "runtime_us": 1.0, "ref_runtime_us": 1000.0, '
          b'"speedup": 1000.0}}\n')


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        torch.os.write(3, RECORD)
        torch.os._exit(0)
        return x
