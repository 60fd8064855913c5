#!/usr/bin/env python3
"""Where a decode step's GPU time goes, from the Chrome trace of `kernelrl_model_bench --profile`.

The decoding window starts at the first kernel whose name contains --marker (the model's decode
attention kernel, launched once per layer per step) and ends with the last GPU event; the number
of steps is the marker's count divided by --layers. Prints the wall time and the summed GPU time
per step, then the kernels by GPU time per step.

usage: decode_profile.py TRACE.json [--layers 30] [--marker decode_partial] [--top 25]
"""
import argparse
import collections
import json
import sys

GPU_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset"}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trace")
    p.add_argument("--layers", type=int, default=30)
    p.add_argument("--marker", default="decode_partial")
    p.add_argument("--top", type=int, default=25)
    a = p.parse_args()
    try:
        with open(a.trace) as f:
            events = json.load(f).get("traceEvents", [])
    except (OSError, ValueError) as e:
        sys.exit(f"decode_profile.py: cannot read {a.trace}: {e}")
    gpu = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") in GPU_CATEGORIES),
                 key=lambda e: e["ts"])
    if not gpu:
        sys.exit(f"decode_profile.py: {a.trace} has no GPU events (was the profiler built with CUDA?)")
    marks = [e for e in gpu if a.marker in e["name"]]
    if marks:
        start = marks[0]["ts"]
        n_steps = max(1, len(marks) // a.layers)
    else:
        print(f"# no kernel named *{a.marker}*: the whole trace counts as one step")
        start, n_steps = gpu[0]["ts"], 1
    window = [e for e in gpu if e["ts"] >= start]
    end = max(e["ts"] + e["dur"] for e in window)
    busy = sum(e["dur"] for e in window)
    print(f"# decode window: {len(window)} GPU events, {n_steps} steps; per step: wall {(end - start) / n_steps:.1f} us, "
          f"GPU busy {busy / n_steps:.1f} us ({100 * busy / max(end - start, 1e-9):.0f}%), "
          f"{len(window) / n_steps:.0f} kernels")
    by_name = collections.defaultdict(lambda: [0, 0.0])
    for e in window:
        s = by_name[e["name"]]
        s[0] += 1
        s[1] += e["dur"]
    print(f"{'us/step':>9} {'share':>6} {'calls/step':>10}  kernel")
    for name, (count, dur) in sorted(by_name.items(), key=lambda kv: -kv[1][1])[: a.top]:
        short = name if len(name) <= 110 else name[:107] + "..."
        print(f"{dur / n_steps:9.1f} {100 * dur / busy:5.1f}% {count / n_steps:10.1f}  {short}")


if __name__ == "__main__":
    main()
