#!/usr/bin/env python3
"""CPU check of the audit corpus (no GPU, standard library): every parity candidate is listed under
strict, kernelbench and observe exactly once each with a status as its expectation, every path
exists, and the solution set make_solution_set.py writes holds at least 60 solutions with a kernel
of their own (load_inline with CUDA source) and a task file for each. Exits 1 naming what is wrong."""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
STATUSES = {"OK", "WRONG_OUTPUT", "REJECTED", "COMPILE_ERROR", "RUNTIME_ERROR", "FORMAT_ERROR", "TIMEOUT"}
problems = []

manifest = json.load(open(os.path.join(HERE, "parity", "manifest.json")))
rules_by_candidate = {}
for i, e in enumerate(manifest):
    for key in ("task", "candidate"):
        if not os.path.isfile(os.path.join(ROOT, e[key])):
            problems.append(f"parity/manifest.json[{i}]: {key} {e[key]} does not exist")
    if e.get("expect") not in STATUSES:
        problems.append(f"parity/manifest.json[{i}]: expect {e.get('expect')!r} is not a status")
    rules_by_candidate.setdefault(e["candidate"], []).append(e.get("rules", "strict"))
for candidate, rules in rules_by_candidate.items():
    if sorted(rules) != ["kernelbench", "observe", "strict"]:
        problems.append(f"parity/manifest.json: {candidate} is listed under {sorted(rules)}, not once under each rule set")

with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "set.jsonl")
    subprocess.run([sys.executable, os.path.join(HERE, "make_solution_set.py"), out], check=True, stdout=subprocess.DEVNULL)
    lines = [json.loads(l) for l in open(out) if l.strip()]
own_kernel = 0
for line in lines:
    level, task = line["level_id"], line["task_id"]
    folder = os.path.join(ROOT, "tasks", f"level{level}")
    if not any(re.match(rf"0*{task}_", f) for f in os.listdir(folder)):
        problems.append(f"solution {line['name']}: no task number {task} in tasks/level{level}")
    code = line["custom_code"] or ""
    own_kernel += "load_inline" in code and "__global__" in code
if own_kernel < 60:
    problems.append(f"the solution set has {own_kernel} solutions with a CUDA kernel of their own, fewer than 60")

for p in problems:
    print(p)
print(f"parity corpus: {len(rules_by_candidate)} candidates, {len(manifest)} entries; solution set: {len(lines)} "
      f"solutions, {own_kernel} with a kernel of their own; {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
