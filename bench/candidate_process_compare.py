#!/usr/bin/env python3
"""Compares two `kernelrl eval --batch --out` runs of the same jobs: candidates evaluated in the child
(the baseline: `--native-in-child`, `--kernelbench-in-child`) and in a process of their own (the
default on a GPU), both made in the same call on the same machine (scripts/gpu-check.sh process).
Prints, per task, the candidate's and the reference's median runtimes and the speedups of both runs,
then the medians of the ratios (apart / in the child) and the statuses that differ.

    bench/candidate_process_compare.py IN_CHILD.jsonl APART.jsonl [--wall-s IN_CHILD_S APART_S]
"""
import argparse
import json
import statistics


def load(path):
    rows = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                rows[(r.get("task"), r.get("candidate"), r.get("rules"))] = r
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("in_child")
    p.add_argument("apart")
    p.add_argument("--wall-s", nargs=2, type=float, help="the two batches' wall times, for candidates/min")
    a = p.parse_args()
    base, apart = load(a.in_child), load(a.apart)
    ratios, ref_ratios, speedup_ratios, differ = [], [], [], []
    print(f"{'candidate':40} {'cand us':>9} {'apart us':>9} {'ratio':>7} {'ref us':>9} {'ref apart':>9} {'speedup':>8} {'apart':>8}")
    for key in sorted(k for k in base if k in apart):
        b, s = base[key], apart[key]
        if b.get("status") != s.get("status"):
            differ.append(f"{str(key[1]).split('/')[-1]} ({key[2]}): {b.get('status')} in the child, {s.get('status')} apart ({s.get('error', {}).get('message', '')[:120]})")
            continue
        if b.get("status") != "OK" or not b.get("runtime_us") or not s.get("runtime_us"):
            continue
        r = s["runtime_us"] / b["runtime_us"]
        rr = s["ref_runtime_us"] / b["ref_runtime_us"] if b.get("ref_runtime_us") else float("nan")
        ratios.append(r)
        ref_ratios.append(rr)
        speedup_ratios.append(s["speedup"] / b["speedup"] if b.get("speedup") else float("nan"))
        name = str(key[1]).split("/")[-1][:40]
        print(f"{name:40} {b['runtime_us']:9.1f} {s['runtime_us']:9.1f} {r:7.3f} {b['ref_runtime_us']:9.1f} "
              f"{s['ref_runtime_us']:9.1f} {b['speedup']:8.3f} {s['speedup']:8.3f}")
    if ratios:
        print(f"over {len(ratios)} OK tasks, apart / in the child: candidate runtime median x{statistics.median(ratios):.3f} "
              f"(min {min(ratios):.3f}, max {max(ratios):.3f}); reference runtime median x{statistics.median(ref_ratios):.3f}; "
              f"speedup median x{statistics.median(speedup_ratios):.3f}")
    if a.wall_s:
        n = len(base)
        print(f"throughput: {60 * n / a.wall_s[0]:.1f} candidates/min in the child, {60 * n / a.wall_s[1]:.1f} apart "
              f"(x{a.wall_s[0] / a.wall_s[1]:.3f})")
    print(f"statuses that differ: {len(differ)}")
    for d in differ:
        print("  " + d)
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
