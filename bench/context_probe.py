#!/usr/bin/env python3
"""Where a fresh evaluation child's CUDA start-up time goes: a parent that imported torch without
touching CUDA forks N children at once (as the engine's workers do); each times cuInit, the primary
context, torch's CUDA initialisation and a first kernel. Repeated for a few environment settings.
usage: context_probe.py [ROUNDS]   (prints one line per setting and concurrency: medians in ms)"""
import ctypes
import json
import os
import statistics
import sys
import time

import torch  # noqa: F401  (imported before the fork, as in the engine's worker)


def child(write_fd):
    t = {}
    t0 = time.perf_counter()
    cuda = ctypes.CDLL("libcuda.so.1")
    assert cuda.cuInit(0) == 0
    t["cuInit"] = time.perf_counter() - t0
    dev = ctypes.c_int()
    cuda.cuDeviceGet(ctypes.byref(dev), 0)
    ctx = ctypes.c_void_p()
    t1 = time.perf_counter()
    assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
    assert cuda.cuCtxSetCurrent(ctx) == 0
    t["context"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    torch.cuda.init()
    t["torch_init"] = time.perf_counter() - t2
    t3 = time.perf_counter()
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    t["first_kernel"] = time.perf_counter() - t3
    t["total"] = time.perf_counter() - t0
    os.write(write_fd, (json.dumps(t) + "\n").encode())
    os._exit(0)


def round_of(n):
    fds, pids = [], []
    for _ in range(n):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            child(w)
        os.close(w)
        fds.append(r)
        pids.append(pid)
    out = []
    for r, pid in zip(fds, pids):
        data = b""
        while chunk := os.read(r, 4096):
            data += chunk
        os.close(r)
        os.waitpid(pid, 0)
        if data:
            out.append(json.loads(data))
    return out


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    settings = [{}, {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}, {"CUDA_DEVICE_MAX_CONNECTIONS": "2"},
                {"CUDA_MODULE_LOADING": "LAZY", "CUDA_DEVICE_MAX_CONNECTIONS": "4"}]
    base = dict(os.environ)
    for setting in settings:
        os.environ.clear()
        os.environ.update(base)
        os.environ.update(setting)
        for n in (1, 4):
            samples = []
            t0 = time.perf_counter()
            for _ in range(rounds):
                samples += round_of(n)
            wall = time.perf_counter() - t0
            med = {k: round(statistics.median(s[k] for s in samples) * 1000, 1) for k in samples[0]}
            print(f"setting {setting or 'default'} children at once {n}: contexts/s {len(samples) / wall:.2f} medians ms {med}",
                  flush=True)


if __name__ == "__main__":
    main()
