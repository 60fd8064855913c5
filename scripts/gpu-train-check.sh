#!/usr/bin/env bash
# Issue 6 on the GPU machine: the policy model and the trainer. The default model (98 MB) is larger
# than one call may carry, so it travels in two parts (scripts/gpu-deps.sh --model splits it into
# .gpu-model-aa/ and .gpu-model-ab/) over back-to-back calls and is reassembled in /tmp/kernelrl-model.
#   scripts/gpu-train-check.sh stage    only keep this call's model part
#   scripts/gpu-train-check.sh bench    build; model GPU tests; our update step and sampling vs
#                                       transformers (ratios); a profile of our decode steps
#                                       (SKIP_HF=1: without transformers)
#   scripts/gpu-train-check.sh train    build; logits vs transformers on the default model's weights
#                                       (our checkpoint loaded by transformers); a `kernelrl train` run
# Logs and a summary go to $OUT (or ./gpu-out).
set -uo pipefail
cd "$(dirname "$0")/.."
mode="${1:-train}"
out="${OUT:-$PWD/gpu-out}"
mkdir -p "$out"
summary="$out/summary.txt"
note() { echo "$*" | tee -a "$summary"; }
export KERNELRL_COMMIT="$(cat .gpu-deps/commit 2>/dev/null || echo unknown)"
export KERNELRL_CACHE_DIR=/tmp/kernelrl-cache PATH="$PATH:/usr/local/cuda/bin"
python="$(command -v python3)"
model="$(scripts/gpu-model.sh)"
model_dir="$(dirname "$model")"
note "gpu-train-check $mode: commit $KERNELRL_COMMIT, $(date -u +%FT%TZ), parts: $(ls "$model_dir" | tr '\n' ' ')"
[ "$mode" = stage ] && exit 0
if [ "$mode" = train ]; then
  echo "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53  $model" | sha256sum -c --quiet ||
    { note "model: not (completely) staged"; exit 1; }
fi

t0=$(date +%s)
scripts/gpu-build.sh -j16 kernelrl kernelrl_model_bench $([ "$mode" = bench ] && echo model_gpu_test) >"$out/build.log" 2>&1
rc=$?
note "build: rc $rc in $(( $(date +%s) - t0 )) s"
[ $rc -eq 0 ] || { tail -30 "$out/build.log"; exit 1; }
bin=build-gpu/tools/kernelrl/kernelrl

if [ "$mode" = bench ]; then
  build-gpu/tests/model/model_gpu_test >"$out/model-gpu-test.log" 2>&1; note "model_gpu_test: rc $?"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure" "$out/model-gpu-test.log" | head -12 | tee -a "$summary"
  build-gpu/bench/kernelrl_model_bench --profile "$out/decode-trace.json" >"$out/model-bench.log" 2>&1
  note "ours: rc $?"
  $python bench/decode_profile.py "$out/decode-trace.json" >"$out/decode-profile.txt" 2>&1
  head -16 "$out/decode-profile.txt" | tee -a "$summary"
  gzip -f "$out/decode-trace.json"
  if [ -z "${SKIP_HF:-}" ]; then
    $python bench/hf_model_bench.py >"$out/hf-bench.log" 2>&1; note "transformers: rc $?"
  else
    : >"$out/hf-bench.log"
  fi
  grep -h "^row" "$out/model-bench.log" "$out/hf-bench.log" | tee -a "$summary"
  $python - "$out/model-bench.log" "$out/hf-bench.log" <<'PY' | tee -a "$summary"
import sys
def rows(path):
    r = {}
    for line in open(path):
        p = line.split()
        if len(p) >= 3 and p[0] == "row":
            try: r[p[1]] = float(p[2])
            except ValueError: pass
    return r
ours, hf = rows(sys.argv[1]), rows(sys.argv[2])
for k in sorted(set(ours) & set(hf)):
    print(f"ratio {k}: ours {ours[k]:.1f} / transformers {hf[k]:.1f} = {ours[k] / hf[k]:.2f}x")
PY
  exit 0
fi

# Logits: the default model's weights through our loader, saved as a Hugging Face folder, loaded by
# transformers; our model (from that folder) and transformers' on the same batch.
if [ -z "${SKIP_LOGITS:-}" ]; then
  hf=/tmp/kernelrl-hf-smollm2
  rm -rf "$hf"
  $bin convert "$model" "$hf" >>"$summary" 2>&1
  build-gpu/bench/kernelrl_model_bench --dump-logits "$hf" >"$out/logits.log" 2>&1
  $python scripts/hf_logits_check.py "$hf" --device cuda >>"$out/logits.log" 2>&1
  note "logits vs transformers: rc $?"; tail -4 "$out/logits.log" | tee -a "$summary"
fi

# Training with the default model (docs/train.md says why the reward here is the format reward).
# RESUME=1 continues the run a previous call on this (still warm) machine left in $run.
run=/tmp/kernelrl-train-run
[ -n "${RESUME:-}" ] || rm -rf "$run"
train_args=(train --model "$model" --out "$run" --reward format --steps "${STEPS:-20}"
  --tasks-per-step 4 --trajectories 16 --turns 1 --max-new-tokens "${NEW_TOKENS:-256}" --lr "${LR:-3e-5}"
  --temperature "${TEMPERATURE:-0.9}" --max-grad-norm 1.0)
timeout "${TRAIN_S:-330}" $bin "${train_args[@]}" >"$out/train.log" 2>&1
rc=$?
note "train: rc $rc"; grep -E "^step|^train|fatal signal" "$out/train.log" | tee -a "$summary"
# After a crash the run resumes at the crashed step (the same batch) under cuda-gdb, which stops at
# the signal and prints every thread's stack.
if grep -q "fatal signal" "$out/train.log" && command -v cuda-gdb >/dev/null; then
  timeout "${GDB_S:-240}" cuda-gdb -q -batch -ex "set pagination off" -ex "set print thread-events off" -ex "set cuda api_failures ignore" -ex run \
    -ex "info threads" -ex bt -ex "thread apply all bt 12" --args $bin "${train_args[@]}" >"$out/gdb.log" 2>&1
  note "cuda-gdb rerun: rc $?"
  grep -v "Cuda Driver error" "$out/gdb.log" | grep -A30 -E "received signal" | head -80 | tee -a "$summary"
fi
# A crash report's frames (OBJECT(+OFFSET)) resolved to functions and lines.
grep -oE '^[^ ]+\(\+0x[0-9a-f]+\)' "$out/train.log" | head -40 | while IFS= read -r frame; do
  obj="${frame%%(*}"; off="${frame##*(+}"; off="${off%)}"
  echo "$frame: $(addr2line -f -C -p -e "$obj" "$off" 2>/dev/null | head -1)"
done | tee -a "$summary"
cp "$run/train_log.jsonl" "$out/" 2>/dev/null
chart=()
[ -s .gpu-deps/chart.min.js ] && chart=(--chart-js .gpu-deps/chart.min.js)
$bin report "$run" "${chart[@]}" >"$out/train-report.txt" 2>&1 || true
cp "$run"/report.html "$out/train-report.html" 2>/dev/null
