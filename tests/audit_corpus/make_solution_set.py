#!/usr/bin/env python3
"""Writes a solution set in CUDA-L1's published layout (JSON lines) from this repository's corpora.

Each line: {"level_id": L, "task_id": N, "custom_code": CODE, "score_default": CLAIM_OR_NULL, "name": STEM}
L comes from the task's folder (tasks/level1 -> 1), N from the task file's leading number
(001_... -> 1). CUDA-L1 has one line per task; several solutions here may share a task, so every
solution gets its own line and "name" (the candidate file's stem, prefixed by its source) tells
them apart.

Sources:
  - tests/kernelbench_corpus/manifest.json: entries of kind "honest", device "cuda", whose task is
    under tasks/level1 or tasks/level2 (no claim: score_default null);
  - every .py of tests/kernelbench_corpus/published/ (task tasks/level2/<same file name>; claim
    null unless published/claims.json exists);
  - every .py of tests/audit_corpus/published_style/ (stem l<L>_<rest>: task tasks/level<L>/<rest>.py;
    claims from published_style/claims.json).

Usage: python3 tests/audit_corpus/make_solution_set.py OUT.jsonl [--level1-only] [--with-parity]
Standard library only.
"""
import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
TASK_RE = re.compile(r"^tasks/level(\d+)/(\d+)_[^/]*\.py$")


def rel(path):
    return os.path.relpath(path, ROOT).replace(os.sep, "/")


def task_ids(task):
    """(level, task number) of a task path relative to the root, or None when not tasks/levelL/NNN_*.py."""
    m = TASK_RE.match(task)
    return (int(m.group(1)), int(m.group(2))) if m else None


def load_claims(path):
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        claims = json.load(f)
    if not isinstance(claims, dict):
        sys.exit(f"{rel(path)}: expected a JSON object stem -> claimed speedup")
    return claims


def honest_entries():
    manifest = os.path.join(ROOT, "tests", "kernelbench_corpus", "manifest.json")
    with open(manifest) as f:
        entries = json.load(f)
    seen = set()
    for e in entries:
        if e.get("kind") != "honest" or e.get("device", "cuda") != "cuda":
            continue
        task, cand = e["task"], e["candidate"]
        if task_ids(task) is None or cand in seen:
            continue
        seen.add(cand)
        stem = os.path.splitext(os.path.basename(cand))[0]
        yield task, cand, "kbcorpus_" + os.path.basename(os.path.dirname(cand)) + "_" + stem, None


def published_entries():
    folder = os.path.join(ROOT, "tests", "kernelbench_corpus", "published")
    claims = load_claims(os.path.join(folder, "claims.json"))
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".py"):
            continue
        stem = name[:-3]
        task = "tasks/level2/" + name
        if not os.path.exists(os.path.join(ROOT, task)):
            sys.exit(f"tests/kernelbench_corpus/published/{name}: no task {task}")
        yield task, rel(os.path.join(folder, name)), "published_" + stem, claims.get(stem)


def published_style_entries():
    folder = os.path.join(HERE, "published_style")
    claims = load_claims(os.path.join(folder, "claims.json"))
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".py"):
            continue
        stem = name[:-3]
        m = re.match(r"^l(\d+)_(.+)$", stem)
        if not m:
            sys.exit(f"{rel(os.path.join(folder, name))}: name must be l<level>_<task file stem>.py")
        task = f"tasks/level{int(m.group(1))}/{m.group(2)}.py"
        if not os.path.exists(os.path.join(ROOT, task)):
            sys.exit(f"{rel(os.path.join(folder, name))}: no task {task}")
        if stem not in claims:
            print(f"warning: no claim for {stem} in published_style/claims.json", file=sys.stderr)
        yield task, rel(os.path.join(folder, name)), "audit_" + stem, claims.get(stem)


def parity_entries():
    """The parity corpus's candidates whose task is under tasks/ (each once), no claim: an audit of
    them is the parity check under all three rule sets (their expectations: parity/manifest.json)."""
    with open(os.path.join(HERE, "parity", "manifest.json")) as f:
        entries = json.load(f)
    seen = set()
    for e in entries:
        if task_ids(e["task"]) is None or e["candidate"] in seen:
            continue
        seen.add(e["candidate"])
        stem = os.path.splitext(os.path.basename(e["candidate"]))[0]
        yield e["task"], e["candidate"], "parity_" + stem, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="the JSON lines file to write")
    ap.add_argument("--level1-only", action="store_true", help="only tasks of tasks/level1")
    ap.add_argument("--with-parity", action="store_true",
                    help="the parity corpus's candidates first (an audit of them checks parity/manifest.json's expectations)")
    args = ap.parse_args()

    lines = []
    # In this order, which is the order an audit evaluates them in: a call stopped early has the
    # parity corpus and the published-style solutions first.
    sources = ([parity_entries()] if args.with_parity else []) + [published_style_entries(), published_entries(), honest_entries()]
    for source in sources:
        for task, cand, name, claim in source:
            level, number = task_ids(task)
            if args.level1_only and level != 1:
                continue
            with open(os.path.join(ROOT, cand)) as f:
                code = f.read()
            if claim is not None and not isinstance(claim, (int, float)):
                sys.exit(f"{name}: claim {claim!r} is not a number")
            lines.append({"level_id": level, "task_id": number, "custom_code": code,
                          "score_default": None if claim is None else float(claim), "name": name})
    names = [d["name"] for d in lines]
    if len(set(names)) != len(names):
        sys.exit("duplicate names in the solution set")
    with open(args.out, "w") as f:
        for d in lines:
            f.write(json.dumps(d) + "\n")
    claimed = sum(d["score_default"] is not None for d in lines)
    print(f"wrote {len(lines)} lines to {args.out} ({claimed} with a claim)")


if __name__ == "__main__":
    main()
