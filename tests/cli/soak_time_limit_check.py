#!/usr/bin/env python3
"""scripts/soak.py stopped by its --time-limit-s (as a time-limited GPU call needs it): the batch is
stopped like a Ctrl-C, the records it wrote are still checked, and nothing of it is left running.

    tests/cli/soak_time_limit_check.py PYTHON KERNELRL OUT_DIR
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    python, kernelrl, out = sys.argv[1:4]
    # 40 CPU evaluations take over a minute: the limit stops this batch, after its first records.
    rc = subprocess.run([python, os.path.join(ROOT, "scripts", "soak.py"), "--kernelrl", kernelrl, "--device", "cpu",
                         "--n", "40", "--faulty-every", "5", "--band", "0", "--out", out, "--time-limit-s", "20"],
                        stdout=subprocess.DEVNULL).returncode
    summary = json.load(open(os.path.join(out, "summary.json")))
    problems = []
    if rc != 1:
        problems.append(f"soak.py exited {rc}, not 1 (a check failed: the batch was stopped)")
    if not summary.get("stopped_at_time_limit"):
        problems.append("the summary does not say the batch was stopped")
    if not 0 < summary["records"] < summary["jobs"]:
        problems.append(f"{summary['records']} records of {summary['jobs']}: expected some, not all")
    if summary["engine_errors"]:
        problems.append(f"{summary['engine_errors']} engine errors")
    if summary["processes_left"]:
        problems.append(f"processes left: {summary['processes_left']}")
    for p in problems:
        print("soak time limit:", p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
