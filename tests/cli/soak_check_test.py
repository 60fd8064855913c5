#!/usr/bin/env python3
"""scripts/soak.py's checks on records written over two calls: an engine error ("could_not_evaluate")
that the resumed call evaluated again is kept in the file but no longer the job's record, while one
never evaluated again still fails the soak. On synthetic records, then on the H200 soak shipped in
docs/runs/2026-12-03-apart-soak (906 records at 5f63207 with 2 engine errors, resumed at 1393742) and
the soak of 1,000 at one commit in docs/runs/2026-12-03-one-commit-soak (73989f2, over two calls).

    tests/cli/soak_check_test.py
"""
import gzip
import importlib.util
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location("soak", os.path.join(ROOT, "scripts", "soak.py"))
soak = importlib.util.module_from_spec(spec)
spec.loader.exec_module(soak)


def job(candidate, kind="honest"):
    return {"task": "t.py", "candidate": candidate, "soak_kind": kind}


def result(candidate, status="OK"):
    return {"task": "t.py", "candidate": candidate, "status": status, "speedup": 1.0}


def engine_error(candidate):
    return {"task": "t.py", "candidate": candidate, "could_not_evaluate": "the device was busy"}


def main():
    problems = []
    jobs = [job("a"), job("a"), job("b"), job("c", "crash")]
    # Resumed: a's engine error evaluated again (a has its two results), b's never.
    records = [result("a"), engine_error("a"), engine_error("b"), result("c", "RUNTIME_ERROR"), result("a")]
    summary, failures = soak.check(jobs, records, 0.25)
    if summary["engine_errors"] != 1 or len(summary["engine_errors_evaluated_again"]) != 1:
        problems.append(f"synthetic: {summary['engine_errors']} engine errors, "
                        f"{summary['engine_errors_evaluated_again']} evaluated again (expected 1 and 1)")
    if not any("engine error on b" in f for f in failures) or any("engine error on a" in f for f in failures):
        problems.append(f"synthetic: only b's engine error fails the soak: {failures}")
    if summary["records"] != 4 or any("records for" in f for f in failures):
        problems.append(f"synthetic: {summary['records']} records counted for 4 jobs: {failures}")
    # Every job with its results: nothing fails, the replaced line still listed.
    summary, failures = soak.check(jobs[:2], [engine_error("a"), result("a"), result("a")], 0.25)
    if failures or summary["engine_errors"] or len(summary["engine_errors_evaluated_again"]) != 1:
        problems.append(f"synthetic, all evaluated again: {summary}, {failures}")

    run = os.path.join(ROOT, "docs", "runs", "2026-12-03-apart-soak", "soak-resumed-1393742")
    jobs = soak.make_batch("cuda", 1000, 10)
    if [{k: v for k, v in j.items() if k != "soak_kind"} for j in jobs] != json.load(open(os.path.join(run, "batch.json"))):
        problems.append("the shipped soak's batch.json is not make_batch('cuda', 1000, 10)")
    records = [json.loads(line) for line in gzip.open(os.path.join(run, "results.jsonl.gz"), "rt") if line.strip()]
    summary, failures = soak.check(jobs, records, 0.25)
    if (len(records), summary["records"], summary["engine_errors"], len(summary["engine_errors_evaluated_again"])) != (1002, 1000, 0, 2):
        problems.append(f"shipped soak: {len(records)} lines, {summary['records']} records, {summary['engine_errors']} engine "
                        f"errors, {len(summary['engine_errors_evaluated_again'])} evaluated again (expected 1002, 1000, 0, 2)")
    if failures:
        problems.append(f"shipped soak: {failures[:3]}")

    # The soak of 1,000 at one commit (73989f2, two calls): every line a record, each at that commit.
    run = os.path.join(ROOT, "docs", "runs", "2026-12-03-one-commit-soak", "soak-73989f2")
    records = [json.loads(line) for line in gzip.open(os.path.join(run, "results.jsonl.gz"), "rt") if line.strip()]
    summary, failures = soak.check(jobs, records, 0.25)
    commits = {r.get("commit") for r in records}
    faulty_ok = sum(n.get("OK", 0) for kind, n in summary["statuses_by_kind"].items() if kind != "honest")
    if (len(records), summary["records"], summary["engine_errors"], faulty_ok) != (1000, 1000, 0, 0) or failures:
        problems.append(f"one-commit soak: {len(records)} lines, {summary['records']} records, {summary['engine_errors']} "
                        f"engine errors, {faulty_ok} faulty OK (expected 1000, 1000, 0, 0): {failures[:3]}")
    if commits != {"73989f2a4a56"} or summary["statuses_by_kind"].get("honest") != {"OK": 900}:
        problems.append(f"one-commit soak: commits {commits}, honest {summary['statuses_by_kind'].get('honest')}")
    for p in problems:
        print("FAIL:", p)
    print("soak checks:", "ok" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
