#!/usr/bin/env python3
"""Writes docs/tasks.md from one GPU run: the task manifests, `kernelrl tasks check tasks --json`
output and the fixtures' `kernelrl eval --batch ... --out` records.

usage: tasks_table.py TASKS_CHECK_JSONL FIXTURES_JSONL RUN_NOTE > docs/tasks.md
RUN_NOTE says where and when the numbers were measured (device, date, commit)."""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip().startswith("{")]


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    checks = {os.path.normpath(r["task"]): r for r in read_jsonl(sys.argv[1])}
    fixtures = {}
    for r in read_jsonl(sys.argv[2]):
        fixtures.setdefault(os.path.normpath(r.get("task", "")), []).append(r)
    out = ["# Task suite", "", f"Measured: {sys.argv[3]}.", "",
           "`eager_us`: the PyTorch eager reference, median of L2-flushed timed calls (`kernelrl tasks check`).",
           "`sol_us`: speed of light from the manifest's FLOPs and minimum bytes on the device's FP32 and",
           "memory peaks (eval/speed_of_light.hpp). `fixture`: the shipped native fixture's speedup over eager.", ""]
    n_ok = n_all = 0
    for level in ("level1", "level2"):
        with open(os.path.join(ROOT, "tasks", level, "manifest.json")) as f:
            manifest = json.load(f)
        out += [f"## {level}", "", "| task | split | families | GFLOP | min MB | eager_us | sol_us | check | fixture |",
                "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |"]
        for e in manifest["tasks"]:
            path = os.path.normpath(os.path.join("tasks", level, e["file"]))
            c = checks.get(path)
            n_all += 1
            n_ok += bool(c and c["ok"])
            check = "—" if c is None else ("ok" if c["ok"] else "FAIL: " + "; ".join(c["problems"])[:80])
            fx = [r for r in fixtures.get(path, []) if r.get("format") == "native"]
            fixture = " ".join(f'{r["speedup"]:.2f}x' if r.get("correct") else r.get("status", "?") for r in fx) or ""
            eager = f'{c["ref_us"]:.1f}' if c else "—"
            sol = f'{c["sol_us"]:.1f}' if c and c.get("sol_us") else "—"
            out.append(f'| `{e["file"]}` | {e["split"]} | {", ".join(e.get("families", []))} | {e["flops"] / 1e9:.2f} '
                       f'| {e["min_bytes"] / 1e6:.0f} | {eager} | {sol} | {check} | {fixture} |')
        out.append("")
    out.insert(4, f"{n_ok} of {n_all} tasks pass `kernelrl tasks check`.\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
