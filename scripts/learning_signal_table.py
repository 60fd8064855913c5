#!/usr/bin/env python3
"""The results table of scripts/learning-signal.sh (issue 22) as Markdown, from its state folder:
the supervised warm start (sft/sft.json), the SFT model's held-out evaluation (eval/), and the two
RL runs (single/, multi/): their train.json settings and train_log.jsonl lines (src/train/trainer.cpp
writes them; heldout/* keys come from src/train/heldout.hpp).

    python3 scripts/learning_signal_table.py STATE_DIR
"""
import json
import sys
from pathlib import Path


def read_log(run: Path):
    """The run's log lines by step (a later line for a step replaces an earlier one)."""
    lines = {}
    path = run / "train_log.jsonl"
    if not path.exists():
        return lines
    for n, text in enumerate(path.read_text().splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except json.JSONDecodeError:
            print(f"{path}:{n}: not JSON (cut short?), skipped", file=sys.stderr)
            continue
        lines[int(line["step"])] = line
    return dict(sorted(lines.items()))


def pct(v):
    return "-" if v is None else f"{100 * v:.1f}%"


def num(v, fmt="{:.3f}"):
    return "-" if v is None else fmt.format(v)


def last_heldout(log):
    steps = [s for s, line in log.items() if "heldout/correct_rate" in line]
    return (steps[-1], log[steps[-1]]) if steps else (None, None)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    state = Path(sys.argv[1])
    out = []
    sft = state / "sft" / "sft.json"
    sft_log = state / "sft" / "sft_log.jsonl"
    if sft.exists() and sft_log.exists():
        s = json.loads(sft.read_text())
        steps = [json.loads(t) for t in sft_log.read_text().splitlines() if t.strip()]
        if steps:
            out.append(f"Supervised warm start: {steps[-1]['step']} of {s['steps']} steps x {s['batch']} pairs "
                       f"(lr {s['lr']}) cycling over {len(s['tasks'])} pairs of train ops; negative log-likelihood "
                       f"per answer token {num(steps[0]['nll'])} -> {num(steps[-1]['nll'])}, "
                       f"{sum(t['seconds'] for t in steps):.0f} s.")
    runs = {name: read_log(state / name) for name in ("eval", "single", "multi")}
    settings = {}
    for name in ("single", "multi"):
        f = state / name / "train.json"
        if f.exists():
            settings[name] = json.loads(f.read_text())
    any_settings = next(iter(settings.values()), None) or (
        json.loads((state / "eval" / "train.json").read_text()) if (state / "eval" / "train.json").exists() else None)
    if any_settings:
        h = any_settings["heldout"]
        out.append(f"Held-out evaluation: the {h['split']} split of tasks/starter, {h['trajectories']} trajectories x "
                   f"{h['turns']} turns per op, sampling seed {h['seed']}, temperature "
                   f"{any_settings['policy']['temperature']}, at most {any_settings['policy']['max_new_tokens']} new tokens.")
    for name, s in settings.items():
        r = s["rollout"]
        out.append(f"RL `{name}`: {s['n_steps']} steps x {s['tasks_per_step']} train ops x {r['trajectories']} "
                   f"trajectories x {r['turns']} turns = {s['tasks_per_step'] * r['trajectories'] * r['turns']} samples "
                   f"per step, lr {s['optimizer']['lr']}, seed {s['seed']}, reward 0.3 * correct + speedup * correct "
                   f"(w_correct {r['score']['w_correct']}), returns {r['return']['kind']} gamma {r['return']['gamma']}, "
                   f"advantage {r['advantage']['kind']}.")
    out.append("")
    rows = [("SFT only", runs["eval"])]
    for name, label in (("single", "SFT + single-turn RL"), ("multi", "SFT + multi-turn RL")):
        rows.append((label, runs[name]))
    far = any_settings.get("heldout", {}).get("far_tasks") if any_settings else None
    sections = [("heldout", [])]  # (key prefix, the lines before its table)
    if far:
        sections.append(("heldout_far", ["", f"Far held-out tasks ({len(far)}: " +
                                         ", ".join(Path(t).stem for t in far) + "), the same evaluation:", ""]))
    for prefix, before in sections:
        out.extend(before)
        out.append("| policy | RL steps done | RL samples drawn | held-out correct at turn 1 | trajectories correct "
                   "(any turn) | ops solved | all held-out turns correct | mean speedup of correct | mean best speedup "
                   "(incorrect: 0) | degenerate |")
        out.append("|---|---|---|---|---|---|---|---|---|---|")
        for label, log in rows:
            step, h = last_heldout(log)
            if h is None:
                out.append(f"| {label} | - | - | not run | | | | | | |")
                continue
            k = prefix + "/"
            trained = sum(int(line.get("n_episodes", 0)) for s, line in log.items() if 0 < s <= step)
            out.append(f"| {label} | {step} | {trained} | {pct(h.get(k + 'turn1_correct_rate'))} | "
                       f"{pct(h.get(k + 'trajectory_correct_rate'))} | {pct(h.get(k + 'tasks_solved_frac'))} | "
                       f"{pct(h.get(k + 'correct_rate'))} | {num(h.get(k + 'mean_speedup_correct'))} | "
                       f"{num(h.get(k + 'mean_best_speedup'))} | {pct(h.get(k + 'degenerate_frac'))} |")
    for name in ("single", "multi"):
        log = runs[name]
        if not log:
            continue
        out.append("")
        out.append(f"Run `{name}` per step (train: the step's own rollout; held-out: where evaluated):")
        out.append("")
        out.append("| step | train reward | train correct | train degenerate | held-out turn-1 correct | "
                   "held-out trajectories correct | held-out degenerate | rollout s | update s | held-out s |")
        out.append("|---|---|---|---|---|---|---|---|---|---|")
        for s, line in log.items():
            out.append(f"| {s} | {num(line.get('reward/mean'))} | {pct(line.get('eval/correct_rate'))} | "
                       f"{pct(line.get('response/degenerate_frac'))} | {pct(line.get('heldout/turn1_correct_rate'))} | "
                       f"{pct(line.get('heldout/trajectory_correct_rate'))} | {pct(line.get('heldout/degenerate_frac'))} | "
                       f"{num(line.get('time/rollout_s'), '{:.0f}')} | {num(line.get('time/update_s'), '{:.0f}')} | "
                       f"{num(line.get('time/heldout_s'), '{:.0f}')} |")
    print("\n".join(out))


if __name__ == "__main__":
    main()
