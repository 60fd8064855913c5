#!/usr/bin/env python3
"""scripts/soak.py stopped by its --time-limit-s (as a time-limited GPU call needs it): the batch is
stopped like a Ctrl-C, the records it wrote are still checked, and nothing of it is left running;
then the same soak goes on with --resume (as a second call does) and ends with a record per job.

    tests/cli/soak_time_limit_check.py PYTHON KERNELRL OUT_DIR
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    python, kernelrl, out = sys.argv[1:4]
    soak = [python, os.path.join(ROOT, "scripts", "soak.py"), "--kernelrl", kernelrl, "--device", "cpu",
            "--faulty-every", "5", "--band", "0", "--out", out]
    # 40 CPU evaluations take over a minute: the limit stops this batch, after its first records.
    rc = subprocess.run(soak + ["--n", "40", "--time-limit-s", "20"], stdout=subprocess.DEVNULL).returncode
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
    first_records = summary["records"]
    rc = subprocess.run(soak + ["--n", "40", "--resume"], stdout=subprocess.DEVNULL).returncode
    summary = json.load(open(os.path.join(out, "summary.json")))
    if rc != 0:
        problems.append(f"the resumed soak exited {rc}, not 0: {summary.get('failures')}")
    if summary["records"] != summary["jobs"] or summary["records_before_this_call"] != first_records:
        problems.append(f"resumed: {summary['records']} records of {summary['jobs']}, "
                        f"{summary['records_before_this_call']} before it (the first call wrote {first_records})")
    wrong = subprocess.run(soak + ["--n", "39", "--resume"], capture_output=True, text=True)
    if wrong.returncode != 2 or "another soak's batch" not in wrong.stderr:
        problems.append(f"--resume with another --n: exit {wrong.returncode}, {wrong.stderr.strip()[-200:]!r}")
    for p in problems:
        print("soak time limit:", p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
