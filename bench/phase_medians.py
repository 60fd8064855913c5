#!/usr/bin/env python3
"""Medians over a `kernelrl eval --batch --out` file: the load phase and, for candidates run in a
process of their own, the steps of that process's start: those on the evaluation's path
(`isolation.candidate_process.set_up_ms`) and, for a runner forked ahead, those before the
evaluation was known (`ahead_ms`).
Prints one line, for scripts/gpu-check.sh process.

    bench/phase_medians.py RESULTS.jsonl
"""
import json
import statistics
import sys


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    medians = {"load": [r.get("phases_ms", {}).get("load") for r in rows]}
    for r in rows:
        process = (r.get("isolation") or {}).get("candidate_process", {})
        for key, label in (("ahead_ms", "ahead."), ("set_up_ms", "runner.")):
            for step, ms in process.get(key, {}).items():
                medians.setdefault(label + step, []).append(ms)
    parts = []
    for name, values in medians.items():
        values = [v for v in values if v is not None]
        if values:
            parts.append(f"{name} {statistics.median(values):.0f}")
    print(f"{len(rows)} records: " + ", ".join(parts))


if __name__ == "__main__":
    main()
