#!/usr/bin/env bash
# One call on the GPU machine: build there, run the GPU tests, the shipped examples, timing
# fidelity and the engine benchmarks; logs and a short summary go to $OUT (or ./gpu-out).
#   scripts/gpu-check.sh            build, GPU tests (native ladder, examples), the GPU examples,
#                                   `kernelrl tasks check tasks` (JSON lines), the native fixtures,
#                                   cold compile through the engine
#   scripts/gpu-check.sh fidelity   only the reference-vs-torch.cuda.Event timing comparison
#   scripts/gpu-check.sh batch      only the native batch of 50, with and without the defenses, and
#                                   its variants (nvcc as is; 1, 2, 8 workers; 2 children forked ahead);
#                                   the check kernels' test; WITH_GPU_TESTS=1: `ctest -L gpu` first
#   scripts/gpu-check.sh bench      only what the benchmarks need: native benchmarks (cold compile
#                                   per pipeline first), timing fidelity, then native vs kernelbench
#                                   (KB_N=16 load_inline builds; KB_N=50 for the full comparison,
#                                   ~4 min more) with their throughput ratio; PART=native, then
#                                   PART=kernelbench on the still-warm machine, split it over two calls
# Headers the GPU machine lacks (xxhash.h) travel in .gpu-deps/ (scripts/gpu-deps.sh makes it).
set -uo pipefail
cd "$(dirname "$0")/.."
mode="${1:-main}"
out="${OUT:-$PWD/gpu-out}"
mkdir -p "$out"
export KERNELRL_COMMIT="$(cat .gpu-deps/commit 2>/dev/null || echo unknown)"
export KERNELRL_CACHE_DIR=/tmp/kernelrl-cache
export PATH="$PATH:/usr/local/cuda/bin"
python="$(command -v python3)"
summary="$out/summary.txt"
note() { echo "$*" | tee -a "$summary"; }
# Only a few files come back from the GPU machine: logs are written to $logs and gathered into one
# file ($out/logs.txt) when the script ends; results (JSON lines) and the summary go to $out.
logs=/tmp/gpu-check-logs
rm -rf "$logs" && mkdir -p "$logs"
trap 'for f in "$logs"/*; do echo "===== $(basename "$f")"; cat "$f"; done >"$out/logs.txt" 2>/dev/null' EXIT

note "gpu-check $mode: commit $KERNELRL_COMMIT, $(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$python" \
  -Dpybind11_DIR="$($python -c 'import pybind11; print(pybind11.get_cmake_dir())')" \
  -DKERNELRL_EXTRA_INCLUDE="$PWD/.gpu-deps/include" >"$logs/build.log" 2>&1 &&
  ninja -C build-gpu -j16 $([ "$mode" != main ] && [ -z "${WITH_GPU_TESTS:-}" ] && echo kernelrl kernelrl_bench eval_device_screen_gpu_test) >>"$logs/build.log" 2>&1
rc=$?
note "build: rc $rc in $(( $(date +%s) - t0 )) s"
[ $rc -eq 0 ] || { tail -40 "$logs/build.log"; exit 1; }
bin=build-gpu/tools/kernelrl/kernelrl

# Reference timing against torch.cuda.Event in the same run: torch timed before and after ours
# (each in its own process, a pause between so no process's CUDA teardown overlaps the next).
reference_fidelity() {
  for t in examples/softmax/task.py tasks/level1/002_relu.py tasks/level1/005_sum_reduction.py; do
    torch_us() { $python bench/torch_event_timing.py "$t" 2>>"$logs/fidelity.log" | $python -c 'import json,sys; print(json.load(sys.stdin)["median_us"])'; }
    before=$(torch_us); sleep 2
    ours=$($bin tasks show "$t" --json 2>>"$logs/fidelity.log" | $python -c 'import json,sys; print(json.load(sys.stdin)["ref_runtime"]["median_us"])')
    sleep 2; after=$(torch_us)
    note "fidelity $t: kernelrl ref ${ours} us, torch.cuda.Event ${before} / ${after} us (before / after), ratio to their mean $($python -c "print(round($ours/(($before+$after)/2), 4))")"
  done
}

gpu_tests() {
  (cd build-gpu && ctest -L gpu --output-on-failure -V) >"$logs/gpu-tests.log" 2>&1
  note "ctest -L gpu: rc $?"
  grep -E "^[0-9]+: (ladder|example|adversarial|rollout-gpu) " "$logs/gpu-tests.log" | sed 's/^[0-9]*: //' | tee -a "$summary"
  grep -E "tests passed|tests failed|Failed|SKIPPED" "$logs/gpu-tests.log" | tee -a "$summary"
  # After the ladder, the adversarial corpus and the rollout: nothing of ours left running, no GPU memory held.
  sleep 2
  note "left over after the GPU tests: processes '$(pgrep -af 'kernelrl|rollout_gpu_test|eval_engine_gpu' | grep -v pgrep | tr '\n' ';')'," \
       "GPU compute apps '$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | tr '\n' ';')'," \
       "GPU memory used $(nvidia-smi --query-gpu=memory.used --format=csv,noheader)"
}

if [ "$mode" = main ]; then
  gpu_tests

  # The GPU entries of the shipped examples (host ones are covered on the CPU by CI).
  $python -c 'import json; m = json.load(open("examples/manifest.json")); json.dump([e for e in m if e.get("device") == "cuda"], open("/tmp/gpu-examples.json", "w"))'
  $bin eval --batch /tmp/gpu-examples.json --out "$out/examples.jsonl" >"$logs/examples.log" 2>&1
  note "examples (GPU entries): rc $?"; tail -8 "$logs/examples.log" | tee -a "$summary"
  $bin tasks show examples/linear_relu/task.py >>"$summary" 2>&1

  # Fixtures: every GPU entry must be correct (host ones run in CI).
  $python -c 'import json; m = json.load(open("tasks/fixtures/manifest.json")); json.dump([e for e in m if e.get("device") == "cuda"], open("/tmp/gpu-fixtures.json", "w"))'
  $bin eval --batch /tmp/gpu-fixtures.json --check-expect --out "$out/fixtures.jsonl" >"$logs/fixtures.log" 2>&1
  note "fixtures (GPU entries): rc $?"; tail -6 "$logs/fixtures.log" | tee -a "$summary"

  # Cold compile through the engine's own command.
  $python bench/make_candidates.py /tmp/bench-cands 20 0 >/dev/null
  build-gpu/bench/kernelrl_bench /tmp/bench-cands --compile-only >"$logs/bench-compile.log" 2>&1
  note "bench --compile-only: rc $?"; grep -E "^row|^engine pipeline" "$logs/bench-compile.log" | tee -a "$summary"

  timeout "${TASKS_CHECK_S:-330}" $bin tasks check tasks --json >"$out/tasks-check.jsonl" 2>"$logs/tasks-check.log"
  note "tasks check (all tasks, >= 100 us): rc $?, $(grep -c '"ok":true' "$out/tasks-check.jsonl") ok of $(wc -l <"$out/tasks-check.jsonl")"
  grep '"ok":false' "$out/tasks-check.jsonl" | head -20 | tee -a "$summary" || true
elif [ "$mode" = fidelity ]; then
  reference_fidelity
elif [ "$mode" = batch ]; then
  [ -n "${WITH_GPU_TESTS:-}" ] && gpu_tests
  build-gpu/tests/eval/eval_device_screen_gpu_test >"$logs/device-screen.log" 2>&1
  note "eval_device_screen_gpu_test (the engine's check kernels against the host checker): rc $?, $(grep -E '^\[  (PASSED|FAILED)' "$logs/device-screen.log" | tr '\n' ' ')"
  $python bench/make_candidates.py /tmp/bench-cands 50 0 >/dev/null
  build-gpu/bench/kernelrl_bench /tmp/bench-cands --native-batch-only >"$logs/bench-batch.log" 2>&1
  note "bench --native-batch-only: rc $?"; grep -E "^row" "$logs/bench-batch.log" | tee -a "$summary"
else
  # PART=native or PART=kernelbench splits the run over two calls on the same (warm) machine.
  part="${PART:-both}"
  $python bench/make_candidates.py /tmp/bench-cands 50 "${KB_N:-16}" >/dev/null
  if [ "$part" != kernelbench ]; then
    build-gpu/bench/kernelrl_bench /tmp/bench-cands --skip-kernelbench \
      --fidelity-task examples/softmax/task.py --fidelity-candidate examples/softmax/native.cu >"$logs/bench.log" 2>&1
    note "bench (native): rc $?"; grep -E "^row|fidelity|^engine pipeline" "$logs/bench.log" | tee -a "$summary"
    reference_fidelity
    grep -E "^row: native batch" "$logs/bench.log" | awk -F'|' '{gsub(/ /, "", $2); print $2}' >/tmp/native-per-min
  fi
  if [ "$part" != native ]; then
    native_per_min=$(cat /tmp/native-per-min 2>/dev/null || echo 0)
    note "native batch measured before on this machine: $native_per_min candidates/min"
    build-gpu/bench/kernelrl_bench /tmp/bench-cands --only-kernelbench --native-per-min "$native_per_min" \
      >"$logs/bench-kernelbench.log" 2>&1
    note "bench (kernelbench): rc $?"; grep -E "^row" "$logs/bench-kernelbench.log" | tee -a "$summary"
  fi
fi
