#!/usr/bin/env bash
# scripts/learning-signal.sh end to end on the CPU in seconds: a tiny random policy
# (scripts/make_tiny_policy.py), host candidates at the starter tasks' CPU size, a few steps. Checks
# the phases run in order, the RL runs reuse the SFT model's held-out evaluations (near and far), a rerun does no
# phase again, and the results table has its three policies. Nothing here is about learning.
#   learning_signal_dry_run.sh KERNELRL_BIN
set -euo pipefail
bin="$(realpath "$1")"
cd "$(dirname "$0")/../.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 scripts/make_tiny_policy.py "$tmp/model"
run() {
  STATE="$tmp/state" OUT="$tmp/out" MODEL="$tmp/model" TOKENIZER=tests/data/tokenizer/smollm2 KERNELRL_BIN="$bin" \
    DEVICE=cpu FORMAT=host SIZE=small SFT_STEPS=2 SFT_BATCH=2 STEPS=2 TASKS=1 SINGLE_M=4 MULTI_M=2 MULTI_N=2 \
    HELDOUT_M=1 HELDOUT_N=2 HELDOUT_EVERY=1 NEW_TOKENS=16 FAR="tasks/level1/004_layernorm.py tasks/level1/062_argmax.py" \
    scripts/learning-signal.sh
}
run >"$tmp/first.txt" 2>&1 || { cat "$tmp/first.txt"; echo "FAIL: the first run"; exit 1; }
fail() { cat "$tmp/first.txt"; echo "FAIL: $*"; exit 1; }
for phase in sft eval single multi; do grep -q "^$phase: rc 0" "$tmp/first.txt" || fail "phase $phase did not run"; done
# The RL runs' step-0 held-out line is the eval phase's rollout read back, not sampled again.
for run_name in single multi; do
  cmp <(grep -c . "$tmp/state/eval/heldout/step-00000/trajectories.jsonl") \
      <(grep -c . "$tmp/state/$run_name/heldout/step-00000/trajectories.jsonl") || fail "$run_name resampled step 0"
  cmp <(grep -c . "$tmp/state/eval/heldout-far/step-00000/trajectories.jsonl") \
      <(grep -c . "$tmp/state/$run_name/heldout-far/step-00000/trajectories.jsonl") || fail "$run_name resampled the far step 0"
  head -1 "$tmp/state/$run_name/train_log.jsonl" | grep -q '"step":0' || fail "$run_name has no step-0 line"
  head -1 "$tmp/state/$run_name/train_log.jsonl" | grep -q '"heldout_far/n_answered":4' || fail "$run_name: no far held-out line (2 tasks x 2 turns)"
  [ "$(grep -c . "$tmp/state/$run_name/train_log.jsonl")" = 3 ] || fail "$run_name: not 3 log lines"
  [ -s "$tmp/out/$run_name-report.html" ] || fail "no $run_name report"
done
grep -q "^| SFT only | 0 | 0 |" "$tmp/out/results.md" || fail "no SFT row"
grep -q "^| SFT + single-turn RL | 2 | 8 |" "$tmp/out/results.md" || fail "no single-turn row"
grep -q "^| SFT + multi-turn RL | 2 | 8 |" "$tmp/out/results.md" || fail "no multi-turn row"
grep -q "^Far held-out tasks (2: 004_layernorm, 062_argmax)" "$tmp/out/results.md" || fail "no far held-out table"
[ "$(grep -c "^| SFT + multi-turn RL | 2 | 8 |" "$tmp/out/results.md")" = 2 ] || fail "no multi-turn row in the far table"
run >"$tmp/second.txt" 2>&1 || { cat "$tmp/second.txt"; echo "FAIL: the rerun"; exit 1; }
if grep -qE "^(sft|eval|single|multi): rc" "$tmp/second.txt"; then cat "$tmp/second.txt"; echo "FAIL: a rerun redid a phase"; exit 1; fi
echo "learning-signal dry run: OK"
