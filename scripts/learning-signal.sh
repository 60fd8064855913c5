#!/usr/bin/env bash
# Issue 22's experiment, one command: does RL raise a small model's kernel correctness on operators
# it never trained on? The starter tasks (tasks/starter: 36 train ops, 13 held-out ops) and the
# default model (SmolLM2-135M-Instruct):
#   sft     `kernelrl sft`: a supervised warm start on (prompt, correct kernel) pairs of the train ops
#   eval    the SFT model on the held-out ops (`kernelrl train --steps 0 --heldout-split test`)
#   single  GRPO with the kernel reward from the SFT model, single-turn: TASKS tasks x SINGLE_M x 1
#   multi   the same from the same start, multi-turn: TASKS tasks x MULTI_M x MULTI_N (equal samples
#           per task and step when SINGLE_M = MULTI_M x MULTI_N)
#   report  each run's HTML report (the curves, train and held-out) and the results table
# Both RL runs evaluate the held-out ops with the same settings (HELDOUT_M x HELDOUT_N per op, the
# same seed) before their first step (the SFT model's evaluation, reused: the same model, prompts
# and seed), every HELDOUT_EVERY steps and after the last.
#
#   scripts/learning-signal.sh                 every phase not done yet
#   scripts/learning-signal.sh build|stage     only build kernelrl | only gather the model's carried parts
#   DEADLINE_S=540 scripts/learning-signal.sh  stop by then (a phase cut short resumes on the next call)
#
# State in $STATE (default /tmp/kernelrl-learning-signal; each phase is skipped once done, and a
# training run resumes from its last step); results in $OUT (default ./learning-signal-out):
# summary.txt, results.md (the table), sft.json, <run>-report.html, <run>-train_log.jsonl.
# The model: $MODEL (default .cache/models/SmolLM2-135M-Instruct.Q4_1.gguf, which
# scripts/fetch-default-model.sh fetches; on the lent GPU machine the two parts that
# `scripts/gpu-deps.sh --model` makes, carried by consecutive calls into /tmp/kernelrl-model).
set -uo pipefail
cd "$(dirname "$0")/.."
src="$PWD"
out="${OUT:-$PWD/learning-signal-out}"
state="${STATE:-/tmp/kernelrl-learning-signal}"
mkdir -p "$out" "$state"
summary="$out/summary.txt"
note() { echo "$*" | tee -a "$summary"; }
t_start=$(date +%s)
left() { if [ -n "${DEADLINE_S:-}" ]; then echo $(( DEADLINE_S - ($(date +%s) - t_start) )); else echo 1000000; fi; }

SFT_STEPS="${SFT_STEPS:-150}" SFT_BATCH="${SFT_BATCH:-8}" SFT_LR="${SFT_LR:-2e-5}"
STEPS="${STEPS:-10}" TASKS="${TASKS:-6}" LR="${LR:-1e-5}" NEW_TOKENS="${NEW_TOKENS:-768}"
SINGLE_M="${SINGLE_M:-16}" MULTI_M="${MULTI_M:-4}" MULTI_N="${MULTI_N:-4}"
HELDOUT_M="${HELDOUT_M:-4}" HELDOUT_N="${HELDOUT_N:-2}" HELDOUT_EVERY="${HELDOUT_EVERY:-5}"
SEED="${SEED:-1}" FORMAT="${FORMAT:-native}" SIZE="${SIZE:-full}" TEMPERATURE="${TEMPERATURE:-0.9}"
DEVICE="${DEVICE:-auto}"
# Far held-out tasks (issue 41): level-1 operators unlike the starter ops (norms, reductions, scans,
# pooling, a matrix-vector product, a loss, log-softmax), evaluated with the held-out ops and
# reported apart (heldout_far/...). FAR= (empty) leaves them out.
FAR="${FAR-tasks/level1/004_layernorm.py tasks/level1/044_groupnorm.py tasks/level1/046_rmsnorm.py tasks/level1/062_argmax.py tasks/level1/065_std_reduction.py tasks/level1/067_cumsum.py tasks/level1/069_reverse_cumsum.py tasks/level1/006_maxpool2d.py tasks/level1/054_avgpool2d.py tasks/level1/009_matvec.py tasks/level1/092_mse_loss.py tasks/level1/040_log_softmax.py}"
export PATH="$PATH:/usr/local/cuda/bin"

# The model: $MODEL, or the default one, assembled from carried parts where those exist.
model="${MODEL:-$src/.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf}"
if [ -z "${MODEL:-}" ] && [ ! -s "$model" ] && ls .gpu-model-*/part-* >/dev/null 2>&1; then
  model="$(scripts/gpu-model.sh)"
fi
tokenizer="${TOKENIZER:-$model}"
note "learning-signal: commit $(cat .gpu-deps/commit 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null), $(date -u +%FT%TZ), model $model"
mode="${1:-all}"
[ "$mode" = stage ] && exit 0
[ "$mode" = build ] || [ -e "$model" ] || { note "model $model: missing (scripts/fetch-default-model.sh, or MODEL=...)"; exit 1; }

# Build only what the experiment runs.
bin="${KERNELRL_BIN:-}"
if [ -z "$bin" ]; then
  t0=$(date +%s)
  if [ -d .gpu-deps ]; then  # the lent GPU machine
    export KERNELRL_CACHE_DIR=/tmp/kernelrl-cache
    scripts/gpu-build.sh kernelrl >"$out/build.log" 2>&1
    rc=$?; bin=build-gpu/tools/kernelrl/kernelrl
  else
    scripts/build.sh kernelrl >"$out/build.log" 2>&1
    rc=$?; bin=build/tools/kernelrl/kernelrl
  fi
  note "build: rc $rc in $(( $(date +%s) - t0 )) s"
  [ $rc -eq 0 ] || { tail -30 "$out/build.log"; exit 1; }
fi
[ "$mode" = build ] && exit 0

common=(--tokenizer "$tokenizer" --policy-device "$DEVICE" --tasks tasks/starter --format "$FORMAT" --size "$SIZE")
rl=("${common[@]}" --split train --reward kernel --tasks-per-step "$TASKS" --lr "$LR"
    --max-new-tokens "$NEW_TOKENS" --temperature "$TEMPERATURE" --max-grad-norm 1.0 --seed "$SEED"
    --heldout-split test --heldout-every "$HELDOUT_EVERY" --heldout-trajectories "$HELDOUT_M"
    --heldout-turns "$HELDOUT_N")
# shellcheck disable=SC2206  # FAR is a list of paths without spaces
[ -n "$FAR" ] && rl+=(--heldout-far $FAR)
sft_model="$state/sft/checkpoint"

# A phase: runs `kernelrl ARGS` under what is left of the deadline; rc 124 means cut short.
run_phase() {
  local name="$1"; shift
  local budget; budget=$(left)
  if [ "$budget" -le 10 ]; then note "$name: no time left in this call"; return 124; fi
  local t0; t0=$(date +%s)
  timeout --signal=TERM --kill-after=20 "$budget" "$bin" "$@" >>"$out/$name.log" 2>&1
  local rc=$?
  note "$name: rc $rc in $(( $(date +%s) - t0 )) s"
  grep -E "^(sft|train) |^held-out|^step [0-9]+/[0-9]+: reward" "$out/$name.log" | tail -"${SHOW_LINES:-4}" | tee -a "$summary"
  return $rc
}

# sft: short, so a cut-short one starts over.
if [ ! -e "$state/sft/done" ]; then
  rm -rf "$state/sft"
  run_phase sft sft --model "$model" "${common[@]}" --out "$state/sft" --steps "$SFT_STEPS" --batch "$SFT_BATCH" \
    --lr "$SFT_LR" --seed "$SEED" || exit $?
  touch "$state/sft/done"
fi

# eval: the SFT model on the held-out ops (a training run of 0 steps: its step-0 held-out line).
if [ ! -s "$state/eval/heldout/step-00000/metrics.json" ]; then
  run_phase eval train --model "$sft_model" "${rl[@]}" --steps 0 --turns 1 --trajectories "$SINGLE_M" \
    --out "$state/eval" || exit $?
fi

# single and multi: both start from the SFT model; their step-0 held-out evaluation is eval's
# rollout (same model, tasks, prompts, seed and shape), which their trainer reads back instead of
# sampling it again.
start_run() {
  local name="$1"; shift
  if [ ! -d "$state/$name/heldout/step-00000" ]; then
    mkdir -p "$state/$name/heldout"
    cp -r "$state/eval/heldout/step-00000" "$state/$name/heldout/"
    rm -f "$state/$name/heldout/step-00000/metrics.json"
    if [ -d "$state/eval/heldout-far/step-00000" ]; then
      mkdir -p "$state/$name/heldout-far" && cp -r "$state/eval/heldout-far/step-00000" "$state/$name/heldout-far/"
    fi
  fi
  run_phase "$name" train --model "$sft_model" "${rl[@]}" --steps "$STEPS" "$@" --out "$state/$name"
}
finished() { [ -s "$state/$1/train_state.json" ] && grep -q "\"steps_done\": $STEPS\b" "$state/$1/train_state.json"; }
# One after the other: two trainers on one H200 ran out of its memory (2026-12-01: 74 and 46 GiB
# held, mostly cached by their allocators, and the engine's workers could not get 512 MiB).
finished single || start_run single --turns 1 --trajectories "$SINGLE_M"
finished multi || start_run multi --turns "$MULTI_N" --trajectories "$MULTI_M"

# report: whatever has finished (a partial run is reported as far as it got). On the lent GPU
# machine Chart.js comes with .gpu-deps (scripts/gpu-deps.sh).
chart=()
[ -s .gpu-deps/chart.min.js ] && chart=(--chart-js .gpu-deps/chart.min.js)
cp "$state/sft/sft.json" "$state/sft/sft_log.jsonl" "$out/" 2>/dev/null
for name in eval single multi; do
  [ -s "$state/$name/train_log.jsonl" ] || continue
  cp "$state/$name/train_log.jsonl" "$out/$name-train_log.jsonl"
  "$bin" report "$state/$name" --html "$out/$name-report.html" "${chart[@]}" >"$out/$name-report.txt" 2>&1 ||
    note "report $name: rc $? ($(tail -n 1 "$out/$name-report.txt")); the HTML needs Chart.js (Debian's libjs-chart.js): \
run \`kernelrl report\` on the run directory where it is installed"
done
python3 scripts/learning_signal_table.py "$state" >"$out/results.md" 2>>"$summary"
note "results ($out/results.md):"
cat "$out/results.md" | tee -a "$summary"
finished single && finished multi
