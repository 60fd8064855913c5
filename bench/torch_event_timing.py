#!/usr/bin/env python3
"""Baseline for timing fidelity: times a task's eager reference with torch.cuda.Event the way
KernelBench does (warm-up, L2 flushed before each call, events around the call, synchronize),
and prints the median in microseconds as JSON. Compare with `kernelrl tasks show --json`.

usage: torch_event_timing.py TASK_FILE [REPS]"""
import importlib.util
import json
import statistics
import sys

import torch


def main():
    path = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    spec = importlib.util.spec_from_file_location("task", path)
    task = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(task)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    model = task.Model(*task.get_init_inputs()).cuda().eval()
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2 // 4, dtype=torch.float32, device="cuda")
    times = []
    with torch.no_grad():
        for _ in range(5):
            model(*inputs)
        torch.cuda.synchronize()
        for _ in range(reps):
            flush.zero_()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            model(*inputs)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) * 1000.0)
    print(json.dumps({"task": path, "median_us": statistics.median(times), "n": reps}))


if __name__ == "__main__":
    main()
