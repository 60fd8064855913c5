#!/usr/bin/env bash
# One call on the GPU machine: build there, run the GPU tests, the shipped examples, timing
# fidelity and the engine benchmarks; logs and a short summary go to $OUT (or ./gpu-out).
#   scripts/gpu-check.sh            build; GPU tests (native ladder and adversarial corpus, examples,
#                                   the kernelbench corpus: honest candidates and hacks); every shipped
#                                   example (native, host, kernelbench; the README's main job); the
#                                   native fixtures; the kernelbench corpus and published-style set as
#                                   one batch under each rule set (counts by status, candidates/min);
#                                   cold compile through the engine. TASKS_CHECK_S=330 adds
#                                   `kernelrl tasks check tasks` (JSON lines)
#   scripts/gpu-check.sh final      the check of a commit to submit: build; GPU tests but the kernelbench
#                                   corpus (GPU_TESTS_EXCLUDE; FINAL_TESTS=0: none); every example with
#                                   --check-expect; the starter tasks' native fixtures (eager times of the tasks)
#   scripts/gpu-check.sh smoke      only the engine's build; each native example apart and in the child,
#                                   and the GPU corpus entries of the isolation design (one line each)
#   scripts/gpu-check.sh tests      only `final`'s build and GPU tests (the kernelbench corpus left out):
#                                   ~350 s on a fresh machine, for a call that must leave room for another
#   KB_PROBE=N (any mode, last)     the kernelbench example N times in the child and N times apart
#                                   (--kernelbench-in-child, the default): load phase, the runner's start, timings
#   scripts/gpu-check.sh kb         only the kernelbench format: the corpus, the examples' and the
#                                   published-style candidates under each rule set (PUBLISHED_N caps
#                                   the published set; KB_RULES picks the rule sets, KB_BATCH_S stops
#                                   each batch in time), then every shipped example
#   scripts/gpu-check.sh audit      `kernelrl audit` of the parity corpus and the published-style set under
#                                   the three rule sets, the parity verdicts checked (AUDIT_S stops it; a
#                                   second call on the still-warm machine goes on from its records)
#   scripts/gpu-check.sh fidelity   only the reference-vs-torch.cuda.Event timing comparison
#   scripts/gpu-check.sh batch      only the native batch of 50, with and without the defenses, and
#                                   its variants (nvcc as is; 1, 2, 8 workers; 2 children forked ahead);
#                                   the check kernels' test; WITH_GPU_TESTS=1: `ctest -L gpu` first, less
#                                   the kernelbench corpus as `final` (build ~150 s, tests ~200 s, batch ~210 s: on a
#                                   fresh machine too close to 600 s; the whole `ctest -L gpu` never fits)
#   scripts/gpu-check.sh bench      only what the benchmarks need: native benchmarks (cold compile
#                                   per pipeline first), timing fidelity, then native vs kernelbench
#                                   (KB_N=16 load_inline builds; KB_N=50 for the full comparison,
#                                   ~4 min more) with their throughput ratio; PART=native, then
#                                   PART=kernelbench on the still-warm machine, split it over two calls
#   scripts/gpu-check.sh soak       SOAK_N evaluations (1000) through one batch, every 10th a faulty
#                                   candidate (device reset, illegal address, crash, hang, memory bomb,
#                                   hoarded memory, lazy outputs, inputs zeroed, trap, global hook): scripts/soak.py's checks
#                                   (a record each, no engine error, honest results unchanged, nothing left);
#                                   SOAK_ARGS adds `kernelrl eval` arguments (--native-in-child);
#                                   1000 take ~630 s (95 /min, native candidates apart): a warm call, then a resume;
#                                   SOAK_S (570) stops the batch in time and checks what came back;
#                                   SOAK_RESUME=DIR (an earlier call's soak/ folder, brought along in the
#                                   working tree): the same soak goes on from its records (--resume)
#   scripts/gpu-check.sh confine    only the compile read confinement's CPU tests, on this machine's toolchain
#   scripts/gpu-check.sh split      only bench/process_split_bench.cpp: what a GPU candidate in a process of
#                                   its own would cost (second context, CUDA IPC, doorbell round trip
#                                   against in-process timing, the engine's clock apart by call length
#                                   against events, a device reset in the runner)
#   scripts/gpu-check.sh process    candidates in a process of their own against the child: the starter tasks'
#                                   native fixtures and the kernelbench corpus (both apart by default on a GPU;
#                                   --native-in-child, --kernelbench-in-child the baselines) as one batch each way
#                                   (bench/candidate_process_compare.py: runtimes, speedups, statuses,
#                                   candidates/min; PROCESS_FORMATS picks), then the GPU tests of those modes
#                                   (PROCESS_TESTS, default NativeCandidateProcess*:KernelbenchCandidateProcess*)
#   scripts/gpu-check.sh gpus       the native batch on one GPU and on all of them (`eval --batch --gpus`),
#                                   cold caches each: candidates/min and their ratio (a multi-GPU machine)
#   scripts/gpu-check.sh service    the same native batch (SERVICE_N=50 distinct candidates, cold
#                                   compile caches) directly (`kernelrl eval --batch`, one call) and
#                                   through the service (redis-server, `kernelrl serve`, `kernelrl
#                                   worker --gpus all` started after the batch was submitted, so both
#                                   include an engine's start): candidates/min of both and their
#                                   ratio. Needs `scripts/gpu-deps.sh --service` before the call.
# Headers the GPU machine lacks (xxhash.h) travel in .gpu-deps/ (scripts/gpu-deps.sh makes it).
set -uo pipefail
cd "$(dirname "$0")/.."
mode="${1:-main}"
out="${OUT:-$PWD/gpu-out}"
mkdir -p "$out"
export KERNELRL_COMMIT="$(cat .gpu-deps/commit 2>/dev/null || echo unknown)"
export KERNELRL_CACHE_DIR=/tmp/kernelrl-cache
# The GPU tests build into the same cache as the batch runs after them, which then reuse those builds.
export KERNELRL_TEST_COMPILE_CACHE=$KERNELRL_CACHE_DIR/compile
export PATH="$PATH:/usr/local/cuda/bin"
python="$(command -v python3)"
summary="$out/summary.txt"
note() { echo "$*" | tee -a "$summary"; }
# Only a few files come back from the GPU machine: logs are written to $logs and gathered into one
# file ($out/logs.txt) when the script ends; results (JSON lines) and the summary go to $out.
logs=/tmp/gpu-check-logs
rm -rf "$logs" && mkdir -p "$logs"
trap 'for f in "$logs"/*; do echo "===== $(basename "$f")"; cat "$f"; done >"$out/logs.txt" 2>/dev/null' EXIT
trap 'exit 143' TERM  # a `timeout` that stops the script still gathers the logs

note "gpu-check $mode: commit $KERNELRL_COMMIT, $(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$(date +%s)
# The test binaries holding `ctest -L gpu`'s tests (`final` builds only these and what they run).
gpu_test_targets="audit_launch_audit_gpu_test eval_device_screen_gpu_test eval_task_confinement_gpu_test eval_device_screen_test eval_engine_gpu_test model_gpu_test rollout_gpu_test"
# What each mode builds (empty: everything).
engine_targets="kernelrl kernelrl_host_cc kernelrl_confine"
case "$mode" in
  main) targets= ;;
  final | tests) targets="$engine_targets $([ "${FINAL_TESTS:-1}" = 0 ] || echo $gpu_test_targets)" ;;
  split) targets=kernelrl_process_split_bench ;;
  process) targets="$engine_targets eval_engine_gpu_test" ;;
  confine | kb | audit | service | soak | gpus | smoke) targets=$engine_targets ;;
  *) targets="$engine_targets kernelrl_bench eval_device_screen_gpu_test" ;;  # batch, bench, fidelity
esac
[ -n "${WITH_GPU_TESTS:-}" ] && [ "$mode" = batch ] && targets=
scripts/gpu-build.sh -k 0 -j16 $targets >"$logs/build.log" 2>&1
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

# The kernelbench corpus (honest and hacks) and the published-style set, every GPU entry under each
# rule set in one batch: counts by status and candidates/min per rule set. The strict batch runs
# first; both reuse the builds of the GPU tests where those ran (KERNELRL_TEST_COMPILE_CACHE).
kernelbench_batches() {
  for rules in ${KB_RULES:-strict kernelbench}; do
    $python - "$rules" "${PUBLISHED_N:-1000}" <<'PY'
import json, sys
rules, n_published = sys.argv[1], int(sys.argv[2])
# Every kernelbench GPU candidate once, under `rules`; an entry keeps its expected status where the
# manifests list one for these rules.
sources = [("tests/kernelbench_corpus/manifest.json", 1000), ("tests/kernelbench_corpus/published/manifest.json", n_published),
           ("examples/manifest.json", 1000)]
jobs = {}
for path, limit in sources:
    try:
        manifest = json.load(open(path))
    except FileNotFoundError:
        continue
    taken = set()
    for e in manifest:
        if e.get("device") != "cuda" or e.get("format", "kernelbench") != "kernelbench" or not e["candidate"].endswith(".py"):
            continue
        key = (e["task"], e["candidate"])
        if key not in taken and len(taken) >= limit:
            continue
        taken.add(key)
        job = jobs.setdefault(key, {"task": e["task"], "candidate": e["candidate"], "format": "kernelbench",
                                    "device": "cuda", "rules": rules})
        if e.get("rules", "strict") == rules and "expect" in e:
            job["expect"] = e["expect"]
        elif "expect" not in job and path.startswith("examples"):
            job["expect"] = "OK"
json.dump(list(jobs.values()), open(f"/tmp/kb-batch-{rules}.json", "w"), indent=0)
PY
    t0=$(date +%s.%N)
    timeout "${KB_BATCH_S:-3600}" $bin eval --batch "/tmp/kb-batch-$rules.json" --check-expect --out "$out/kb-batch-$rules.jsonl" >"$logs/kb-batch-$rules.log" 2>&1
    rc=$?
    wall=$($python -c "import time; print(round(time.time() - $t0, 1))")
    note "kernelbench batch, rules $rules: rc $rc (1: a status differs from its expectation), $($python - "$out/kb-batch-$rules.jsonl" "$wall" <<'PY'
import collections, json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
wall = float(sys.argv[2])
counts = collections.Counter(r.get("status", "?") for r in rows)
hits = sum(1 for r in rows if r.get("cache_hit"))
print(f"{len(rows)} candidates in {wall} s = {60 * len(rows) / max(wall, 1e-9):.1f} /min ({hits} compile cache hits); "
      + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
PY
)"
    grep -iE "expected|differs|mismatch" "$logs/kb-batch-$rules.log" | head -20 | tee -a "$summary"
  done
}

gpu_tests() {
  # GPU_TESTS_EXCLUDE: a regex of tests left out (`final` leaves out the kernelbench corpus, whose
  # cold builds alone take ~7 minutes; the kb mode runs the same corpus as batches; and the
  # kernelbench corpus apart, the default on a GPU but ~12 s an evaluation: the process mode runs it;
  # `final`'s examples evaluate a kernelbench candidate apart).
  local t_tests=$(date +%s)
  (cd build-gpu && ctest -L gpu ${GPU_TESTS_EXCLUDE:+-E "$GPU_TESTS_EXCLUDE"} --output-on-failure -V) >"$logs/gpu-tests.log" 2>&1
  note "ctest -L gpu: rc $? in $(( $(date +%s) - t_tests )) s"
  grep -E "^[0-9]+: (ladder|example|adversarial|rollout-gpu|kb-corpus) " "$logs/gpu-tests.log" | sed 's/^[0-9]*: //' | tee -a "$summary"
  grep -E "tests passed|tests failed|Failed|SKIPPED" "$logs/gpu-tests.log" | tee -a "$summary"
  # After the ladder, the adversarial corpus and the rollout: nothing of ours left running, no GPU memory held.
  sleep 2
  note "left over after the GPU tests: processes '$(pgrep -af 'kernelrl|rollout_gpu_test|eval_engine_gpu' | grep -v pgrep | tr '\n' ';')'," \
       "GPU compute apps '$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | tr '\n' ';')'," \
       "GPU memory used $(nvidia-smi --query-gpu=memory.used --format=csv,noheader)"
}

if [ "$mode" = main ]; then
  gpu_tests

  # Every shipped example, as the README's main job evaluates them (GPU and CPU entries).
  $bin eval --batch examples/manifest.json --out "$out/examples.jsonl" >"$logs/examples.log" 2>&1
  note "examples (all entries): rc $?"; tail -12 "$logs/examples.log" | tee -a "$summary"
  $bin tasks show examples/linear_relu/task.py >>"$summary" 2>&1

  # Fixtures: every GPU entry must be correct (host ones run in CI).
  $python -c 'import json; m = json.load(open("tasks/fixtures/manifest.json")); json.dump([e for e in m if e.get("device") == "cuda"], open("/tmp/gpu-fixtures.json", "w"))'
  $bin eval --batch /tmp/gpu-fixtures.json --check-expect --out "$out/fixtures.jsonl" >"$logs/fixtures.log" 2>&1
  note "fixtures (GPU entries): rc $?"; tail -6 "$logs/fixtures.log" | tee -a "$summary"

  # Cold compile through the engine's own command.
  $python bench/make_candidates.py /tmp/bench-cands 20 0 >/dev/null
  build-gpu/bench/kernelrl_bench /tmp/bench-cands --compile-only >"$logs/bench-compile.log" 2>&1
  note "bench --compile-only: rc $?"; grep -E "^row|^engine pipeline" "$logs/bench-compile.log" | tee -a "$summary"

  kernelbench_batches

  # The CPU entries of the adversarial corpus built by this machine's toolchain (CI runs them with
  # Debian's): every hack still refused, the honest controls still OK.
  $python -c 'import json; m = json.load(open("tests/adversarial/adversarial.json")); json.dump([e for e in m if e.get("device") == "cpu" and not e.get("known_gap")], open("/tmp/cpu-adversarial.json", "w"))'
  $bin eval --batch /tmp/cpu-adversarial.json --device cpu --check-expect --timeout-correctness-s 60 \
    --out "$out/cpu-adversarial.jsonl" >"$logs/cpu-adversarial.log" 2>&1
  note "adversarial corpus (CPU entries, this machine's toolchain): rc $? (1: a status differs from its expectation)"
  grep -E "UNEXPECTED|differ" "$logs/cpu-adversarial.log" | head -10 | tee -a "$summary"

  if [ -n "${TASKS_CHECK_S:-}" ]; then
    timeout "$TASKS_CHECK_S" $bin tasks check tasks --json >"$out/tasks-check.jsonl" 2>"$logs/tasks-check.log"
    note "tasks check (all tasks, >= 100 us): rc $?, $(grep -c '"ok":true' "$out/tasks-check.jsonl") ok of $(wc -l <"$out/tasks-check.jsonl")"
    grep '"ok":false' "$out/tasks-check.jsonl" | head -20 | tee -a "$summary" || true
  fi
elif [ "$mode" = final ]; then
  # The check of a commit to submit, in one call: the GPU tests but the kernelbench corpus, the
  # README's main job (every example, checked against its expected status, timed), the starter
  # tasks' native fixtures.
  # FINAL_TESTS=0: the examples and fixtures only (when too little device time is left for the tests).
  [ "${FINAL_TESTS:-1}" = 0 ] || GPU_TESTS_EXCLUDE="${GPU_TESTS_EXCLUDE:-KernelbenchCorpus|KernelbenchCandidateProcess}" gpu_tests
  t1=$(date +%s)
  timeout "${EXAMPLES_S:-300}" $bin eval --batch examples/manifest.json --check-expect --out "$out/examples.jsonl" >"$logs/examples.log" 2>&1
  note "examples (all entries, --check-expect): rc $? in $(( $(date +%s) - t1 )) s"; tail -12 "$logs/examples.log" | tee -a "$summary"
  # STARTER_EVERY=k: every k-th native fixture (each evaluation draws 0.5-1 GB of inputs on the CPU).
  $python -c 'import json, sys; k = int(sys.argv[1]); m = json.load(open("tasks/fixtures/starter/manifest.json")); json.dump([e for e in m if e.get("device") == "cuda"][::k], open("/tmp/starter-native.json", "w"))' "${STARTER_EVERY:-1}"
  t1=$(date +%s)
  timeout "${STARTER_S:-240}" $bin eval --batch /tmp/starter-native.json --check-expect --out "$out/starter-native.jsonl" >"$logs/starter.log" 2>&1
  note "starter native fixtures (full size, --check-expect): rc $? in $(( $(date +%s) - t1 )) s"; tail -3 "$logs/starter.log" | tee -a "$summary"
  $python - "$out/starter-native.jsonl" <<'PY' | tee -a "$summary"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ref = sorted(r.get("ref_runtime_us", 0) for r in rows if r.get("status") == "OK")
if ref:
    print(f"starter eager (reference) times: min {ref[0]:.1f} us, median {ref[len(ref) // 2]:.1f} us, max {ref[-1]:.1f} us over {len(ref)} tasks")
PY
elif [ "$mode" = kb ]; then
  # Only the kernelbench format: the corpus, the examples' kernelbench candidates and the
  # published-style set (PUBLISHED_N of them) under each rule set, then every shipped example.
  kernelbench_batches
  # EXAMPLES_S bounds the examples so a call that ran long still returns what the batches found.
  timeout "${EXAMPLES_S:-600}" $bin eval --batch examples/manifest.json --out "$out/examples.jsonl" >"$logs/examples.log" 2>&1
  note "examples (all entries): rc $? (124: stopped after EXAMPLES_S)"; tail -12 "$logs/examples.log" | tee -a "$summary"
  note "left over: processes '$(pgrep -af 'kernelrl' | grep -v pgrep | tr '\n' ';')', GPU memory used $(nvidia-smi --query-gpu=memory.used --format=csv,noheader)"
elif [ "$mode" = audit ]; then
  # KernelBench parity and `kernelrl audit` (docs/audit.md) in one run: the audit of the set
  # tests/audit_corpus/make_solution_set.py --with-parity writes (the parity corpus's candidates first,
  # then the published-style solutions, the published ones and the honest corpus) judges each under
  # strict, kernelbench and observe; the parity rows are then checked against parity/manifest.json.
  # AUDIT_WORKERS (12) evaluations at once; AUDIT_S (420) stops the audit in time, and a second call
  # on the still-warm machine goes on from its records in /tmp/audit-out. PARITY_BATCH=1 first runs
  # the parity manifest as a batch (its fp16/bf16 entries have tasks outside tasks/).
  if [ -n "${PARITY_BATCH:-}" ]; then
    timeout "${PARITY_S:-300}" $bin eval --batch tests/audit_corpus/parity/manifest.json --check-expect --resume \
      --workers "${AUDIT_WORKERS:-12}" --out /tmp/audit-parity.jsonl >"$logs/parity.log" 2>&1
    note "parity batch: rc $? (1: a verdict differs from its expectation; 124: stopped)"
    cp /tmp/audit-parity.jsonl "$out/parity.jsonl"; grep UNEXPECTED "$logs/parity.log" | head -20 | tee -a "$summary"
  fi
  $python tests/audit_corpus/make_solution_set.py /tmp/audit-set.jsonl --with-parity >>"$logs/audit.log" 2>&1
  t=$(date +%s)
  timeout "${AUDIT_S:-420}" $bin audit /tmp/audit-set.jsonl --tasks tasks --out /tmp/audit-out \
    --workers "${AUDIT_WORKERS:-12}" >"$out/audit-table.txt" 2>>"$logs/audit.log"
  note "audit: rc $? (124: stopped after AUDIT_S; call again to go on) in $(( $(date +%s) - t )) s, $(wc -l </tmp/audit-out/records.jsonl) records"
  cp /tmp/audit-out/records.jsonl /tmp/audit-out/audit.json /tmp/audit-out/audit.html "$out/" 2>/dev/null
  tail -11 "$out/audit-table.txt" | tee -a "$summary"
  $python - /tmp/audit-out/records.jsonl tests/audit_corpus/parity/manifest.json <<'PY' | tee -a "$summary"
import json, os, sys
records = {}
for line in open(sys.argv[1]):
    r = json.loads(line) if line.strip().startswith("{") else None
    if r and os.path.basename(r.get("candidate", "")).startswith("parity_"):
        records[(os.path.basename(r["candidate"])[len("parity_"):], r.get("rules"))] = r
n = n_as_expected = 0
for e in json.load(open(sys.argv[2])):
    r = records.get((os.path.basename(e["candidate"]), e["rules"]))
    if r is None:
        continue
    n += 1
    status = r.get("status", "could not evaluate")
    if status == e["expect"]:
        n_as_expected += 1
    else:
        print(f"  PARITY UNEXPECTED {os.path.basename(e['candidate'])} [{e['rules']}]: {status}, expected {e['expect']}: "
              f"{((r.get('error') or {}).get('message') or r.get('could_not_evaluate', ''))[:240]}")
    calls = ((r.get("isolation") or {}).get("candidate_process") or {}).get("calls")
    if e["rules"] == "observe" and calls:
        print(f"  observe {os.path.basename(e['candidate'])}: {status} speedup {r.get('speedup', 0):.2f} {json.dumps(calls)}")
print(f"parity (audit rows): {n_as_expected} of {n} verdicts as parity/manifest.json expects")
PY
elif [ "$mode" = smoke ]; then
  # The engine alone (no test binaries): each native example apart (the default) and in the child,
  # then the corpus entries of the isolation design's GPU classes; one line each.
  smoke_line() {  # FILE LABEL: status, runtime, reference, speedup, idle calls, the runner's layers
    $python - "$1" "$2" <<'PY' | tee -a "$summary"
import json, sys
text = open(sys.argv[1]).read()
try:
    r = json.loads(text[text.index("{"):])
except Exception as e:
    print(f"{sys.argv[2]}: no record ({e}): {text[-300:]!r}"); sys.exit()
iso = r.get("isolation", {}); cp = iso.get("candidate_process", {})
layers = {k: cp.get(k) for k in ("file_confinement", "syscall_filter", "capabilities_dropped", "launch_audit",
                                 "launch_audit_error", "threads_between_calls", "outside_calls")}
print(f"{sys.argv[2]}: {r.get('status')} runtime {r.get('runtime_us', 0):.1f} us ref {r.get('ref_runtime_us', 0):.1f} us "
      f"speedup {r.get('speedup', 0):.3f} idle {iso.get('timed_apart', {}).get('idle_call_us')} "
      f"{r.get('error', {}).get('message', '')[:300]} {json.dumps(layers)}")
PY
  }
  for ex in vector_add softmax linear_relu; do
    for where in apart child; do
      timeout 120 $bin eval --task examples/$ex/task.py --candidate examples/$ex/native.cu \
        $([ $where = child ] && echo --native-in-child) --json >"$logs/smoke-$ex-$where.json" 2>>"$logs/smoke.log"
      smoke_line "$logs/smoke-$ex-$where.json" "$ex native $where"
    done
  done
  for c in graph_on_a_private_stream computes_on_a_side_stream creates_a_file_by_raw_syscall; do
    timeout 120 $bin eval --task tests/ladder/task_softmax.py --candidate tests/adversarial/native/$c.cu \
      $([ $c = creates_a_file_by_raw_syscall ] && echo --allow-system-calls) --json >"$logs/smoke-$c.json" 2>>"$logs/smoke.log"
    smoke_line "$logs/smoke-$c.json" "$c"
  done
  note "planted file: $(ls /dev/shm/kernelrl-planted-* 2>/dev/null || echo none)"
elif [ "$mode" = tests ]; then
  GPU_TESTS_EXCLUDE="${GPU_TESTS_EXCLUDE:-KernelbenchCorpus|KernelbenchCandidateProcess}" gpu_tests
elif [ "$mode" = soak ]; then
  # SOAK_ARGS: more `kernelrl eval` arguments (e.g. --native-in-child).
  # SOAK_S (default 570): the call's seconds the soak may reach from the script's start; the batch is
  # stopped there and its records so far checked (a fresh machine's build takes ~140 s of them).
  # SOAK_RESUME: an earlier call's soak folder (batch.json, results.jsonl): this call goes on with it.
  soak_s=$(( ${SOAK_S:-570} - ($(date +%s) - t0) )); [ "$soak_s" -lt 60 ] && soak_s=60
  mkdir -p "$out/soak"
  if [ -n "${SOAK_RESUME:-}" ]; then
    cp "$SOAK_RESUME/batch.json" "$out/soak/" && zcat -f "$SOAK_RESUME"/results.jsonl* >"$out/soak/results.jsonl" ||
      note "soak: cannot take the earlier records from SOAK_RESUME=$SOAK_RESUME"
  fi
  $python scripts/soak.py --kernelrl "$bin" --device cuda --n "${SOAK_N:-1000}" --out "$out/soak" --time-limit-s "$soak_s" \
    $([ -n "${SOAK_RESUME:-}" ] && echo --resume) $([ -n "${SOAK_ARGS:-}" ] && echo -- $SOAK_ARGS) >"$logs/soak.log" 2>&1
  rc=$?
  case $rc in 0) said="every check passed" ;; 1) said="rc 1 (a check failed)" ;; 2) said="rc 2 (the batch wrote no records)" ;; *) said="rc $rc" ;; esac
  note "soak: $said, $($python -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["records"], "records of", d["jobs"], "jobs (", d.get("records_before_this_call", 0), "from an earlier call ) in", d["wall_s"], "s;", d["evaluations_per_min"], "/min; engine errors", d["engine_errors"], "; by kind", json.dumps(d["statuses_by_kind"]), "; GPU MiB before/after", d.get("gpu_memory_mib_before_after"), "; processes left", len(d["processes_left"]), "; failures", d["failures"][:5])' "$out/soak/summary.json" 2>&1)"
elif [ "$mode" = confine ]; then
  # The compile read confinement's tests on this machine's toolchain (gcc at /opt/gcc, pip torch with
  # CUDA): a `.incbin`/`.include` of a host file spelt past the static scan must fail to build, the
  # examples and the kernelbench prebuild must still build.
  scripts/gpu-build.sh -j16 compile_test >"$logs/confine-build.log" 2>&1 || note "compile_test did not build: $(tail -5 "$logs/confine-build.log")"
  build-gpu/tests/compile/compile_test --gtest_filter='compile_read*:read_roots*' >"$logs/confine.log" 2>&1
  note "compile read confinement tests: rc $?; $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$logs/confine.log" | tr '\n' ' ')"
  grep -E '^\[  FAILED  \]|SKIPPED' "$logs/confine.log" | head -10 | tee -a "$summary"
elif [ "$mode" = process ]; then
  # PROCESS_FORMATS (default "native kernelbench"): which formats to compare.
  for fmt in ${PROCESS_FORMATS:-native kernelbench}; do
    if [ "$fmt" = native ]; then
      $python -c 'import json; m = json.load(open("tasks/fixtures/starter/manifest.json")); json.dump([e for e in m if e.get("device") == "cuda"], open("/tmp/process-native.json", "w"))'
      flag=; label="starter native fixtures"; in_child=--native-in-child
    else
      $python -c 'import json; m = json.load(open("tests/kernelbench_corpus/manifest.json")); json.dump([{k: v for k, v in e.items() if k in ("task", "candidate", "format", "device", "rules")} for e in m if e.get("device") == "cuda"], open("/tmp/process-kernelbench.json", "w"))'
      flag=--kernelbench-candidate-process; label="kernelbench corpus (honest and hacks)"; in_child=--kernelbench-in-child
    fi
    # The first batch also builds (kernelbench: the load_inline prebuilds), so each format runs once
    # before the two timed batches, to compare evaluations only.
    [ "$fmt" = kernelbench ] && $bin eval --batch /tmp/process-kernelbench.json --out /tmp/process-warm.jsonl >"$logs/process-$fmt-warm.log" 2>&1
    t1=$(date +%s)
    $bin eval --batch "/tmp/process-$fmt.json" $in_child --out "$out/process-$fmt-in-child.jsonl" >"$logs/process-$fmt-in-child.log" 2>&1
    rc1=$?; w1=$(( $(date +%s) - t1 )); t1=$(date +%s)
    $bin eval --batch "/tmp/process-$fmt.json" $flag --out "$out/process-$fmt-apart.jsonl" >"$logs/process-$fmt-apart.log" 2>&1
    rc2=$?; w2=$(( $(date +%s) - t1 ))
    note "$label: in the child rc $rc1 in $w1 s, in a process of their own rc $rc2 in $w2 s"
    $python bench/candidate_process_compare.py "$out/process-$fmt-in-child.jsonl" "$out/process-$fmt-apart.jsonl" \
      --wall-s "$w1" "$w2" >"$logs/process-$fmt-compare.log" 2>&1
    note "compare ($fmt): rc $?"; tail -8 "$logs/process-$fmt-compare.log" | tee -a "$summary"
    cp "$logs/process-$fmt-compare.log" "$out/process-$fmt-compare.txt"
    note "$fmt load phase ms (median): in the child $($python bench/phase_medians.py "$out/process-$fmt-in-child.jsonl"); apart $($python bench/phase_medians.py "$out/process-$fmt-apart.jsonl")"
  done
  build-gpu/tests/eval/eval_engine_gpu_test --gtest_filter="${PROCESS_TESTS:-NativeCandidateProcess*:KernelbenchCandidateProcess*}" \
    >"$logs/process-tests.log" 2>&1
  note "CandidateProcess GPU tests: rc $?; $(grep -E '^\[  (PASSED|FAILED) ' "$logs/process-tests.log" | tr '\n' ' ')"
  grep -E '^candidate process|^kb-corpus summary|^\[  FAILED|Failure' "$logs/process-tests.log" | head -30 | tee -a "$summary"
  note "left over: processes '$(pgrep -af 'kernelrl' | grep -v pgrep | tr '\n' ';')', GPU memory used $(nvidia-smi --query-gpu=memory.used --format=csv,noheader)"
elif [ "$mode" = split ]; then
  # The vector_add example built as a plain shared object: the candidate the bench also calls.
  nvcc -shared -cudart shared -Xcompiler -fPIC -O3 -arch=sm_90 -I include examples/vector_add/native.cu -o /tmp/split-vadd.so \
      >"$logs/split-nvcc.log" 2>&1 || note "nvcc of examples/vector_add/native.cu failed: $(tail -3 "$logs/split-nvcc.log")"
  build-gpu/bench/kernelrl_process_split_bench "${SPLIT_REPS:-200}" $([ -f /tmp/split-vadd.so ] && echo /tmp/split-vadd.so) \
      >"$logs/split.log" 2>&1
  note "process split bench: rc $?"; tee -a "$summary" <"$logs/split.log"
elif [ "$mode" = gpus ]; then
  # The native batch (GPUS_N candidates, default 50 per GPU) on one GPU and on every GPU of the host
  # (`kernelrl eval --batch --gpus`), each with a cold compile cache of its own: candidates/min of
  # both and their ratio (issue 23's target: at least 0.9 x the number of GPUs).
  n_gpus=$(nvidia-smi -L | grep -c '^GPU')
  $python bench/make_candidates.py /tmp/gpus-cands "$(( ${GPUS_N:-50} * n_gpus ))" 0 >/dev/null
  declare -A per_min
  for spec in 0 all; do
    rm -rf "/tmp/gpus-cache-$spec"
    t0=$(date +%s.%N)
    $bin eval --batch /tmp/gpus-cands/native.json --gpus "$spec" --cache-dir "/tmp/gpus-cache-$spec" \
        --out "$out/gpus-$spec.jsonl" >"$logs/gpus-$spec.log" 2>&1
    rc=$?
    wall=$($python -c "import time; print(round(time.time() - $t0, 1))")
    per_min[$spec]=$($python -c "import json, sys; rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]; print(round(60 * sum(1 for r in rows if r.get('status') == 'OK') / $wall, 1))" "$out/gpus-$spec.jsonl")
    note "native batch, --gpus $spec: rc $rc, $(grep -c . "$out/gpus-$spec.jsonl") records in $wall s, ${per_min[$spec]} correct candidates/min; by gpu $($python -c "import collections, json, sys; print(dict(collections.Counter(json.loads(l).get('gpu', '-') for l in open(sys.argv[1]) if l.strip())))" "$out/gpus-$spec.jsonl")"
  done
  note "GPUs: $n_gpus; all vs one GPU: $($python -c "print(round(${per_min[all]} / max(${per_min[0]}, 1e-9), 3))")x (target >= $($python -c "print(0.9 * $n_gpus)"))"
elif [ "$mode" = fidelity ]; then
  reference_fidelity
elif [ "$mode" = batch ]; then
  [ -n "${WITH_GPU_TESTS:-}" ] && GPU_TESTS_EXCLUDE="${GPU_TESTS_EXCLUDE:-KernelbenchCorpus|KernelbenchCandidateProcess}" gpu_tests
  build-gpu/tests/eval/eval_device_screen_gpu_test >"$logs/device-screen.log" 2>&1
  note "eval_device_screen_gpu_test (the engine's check kernels against the host checker): rc $?, $(grep -E '^\[  (PASSED|FAILED)' "$logs/device-screen.log" | tr '\n' ' ')"
  $python bench/make_candidates.py /tmp/bench-cands 50 0 >/dev/null
  # Each row into the summary as it is measured: a call cut short still keeps the rows it reached.
  build-gpu/bench/kernelrl_bench /tmp/bench-cands --native-batch-only 2>&1 | tee "$logs/bench-batch.log" |
    grep --line-buffered -E "^row" >>"$summary"
  note "bench --native-batch-only: rc ${PIPESTATUS[0]}"
elif [ "$mode" = service ]; then
  # --print-config fails in a build without the service (no hiredis or cpp-httplib found).
  if ! $bin serve --redis redis://127.0.0.1:6390 --print-config >/dev/null 2>&1 || [ ! -x .gpu-deps/bin/redis-server ]; then
    note "service: this build has no evaluation service or .gpu-deps has no redis-server (run scripts/gpu-deps.sh --service and carry .gpu-deps)"
    exit 1
  fi
  export LD_LIBRARY_PATH="$PWD/.gpu-deps/svc-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"  # brotli, for cpp-httplib
  n="${SERVICE_N:-50}"
  $python bench/make_candidates.py /tmp/svc-cands "$n" 0 >/dev/null
  rm -rf /tmp/svc-direct /tmp/svc-service /tmp/svc-redis && mkdir -p /tmp/svc-direct /tmp/svc-service /tmp/svc-redis
  # Direct: one `kernelrl eval --batch` call, its own cold caches.
  t0=$(date +%s.%N)
  KERNELRL_CACHE_DIR=/tmp/svc-direct $bin eval --batch /tmp/svc-cands/native.json --cache-dir /tmp/svc-direct/compile \
    --out "$out/service-direct.jsonl" >"$logs/service-direct.log" 2>&1
  rc=$?
  direct_wall=$($python -c "import time; print(round(time.time() - $t0, 2))")
  note "service mode, direct eval --batch: rc $rc"
  # Through the service: Redis (append-only, fsync always, as docs/service.md runs it), serve, then
  # the batch submitted and only then the worker started with --gpus all.
  LD_LIBRARY_PATH="$PWD/.gpu-deps/redis-lib" .gpu-deps/bin/redis-server --port 6390 --bind 127.0.0.1 --dir /tmp/svc-redis \
    --save "" --appendonly yes --appendfsync always --protected-mode no >"$logs/service-redis.log" 2>&1 &
  redis_pid=$!
  $bin serve --redis redis://127.0.0.1:6390 --listen 127.0.0.1:8090 --tasks "ex=$PWD/examples" >"$logs/service-serve.log" 2>&1 &
  serve_pid=$!
  $python - "$bin" /tmp/svc-cands/native.json "$out/service-served.jsonl" "$logs/service-worker.log" >"$logs/service-client.log" 2>&1 <<'PY'
import json, os, subprocess, sys, time, urllib.request
binary, batch_file, out_path, worker_log = sys.argv[1:5]
base, redis = "http://127.0.0.1:8090", "redis://127.0.0.1:6390"
def call(method, path, body=None, timeout=120):
    req = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.load(r)
for _ in range(300):  # serve up and Redis answering
    try:
        if call("GET", "/healthz", timeout=2)["status"]:
            break
    except Exception:
        time.sleep(0.1)
jobs = []
for e in json.load(open(batch_file)):
    assert e["task"].endswith("examples/vector_add/task.py"), e["task"]
    jobs.append({"task": "ex/vector_add/task.py", "candidate": open(e["candidate"]).read(),
                 "candidate_name": os.path.basename(e["candidate"]), "format": "native", "device": "cuda"})
t0 = time.time()
batch = call("POST", "/v1/evaluations", {"jobs": jobs})["batch"]
worker = subprocess.Popen([binary, "worker", "--redis", redis, "--gpus", "all", "--cache-dir", "/tmp/svc-service/compile"],
                          stdout=open(worker_log, "w"), stderr=subprocess.STDOUT,
                          env=dict(os.environ, KERNELRL_CACHE_DIR="/tmp/svc-service"))
view = {"done": False}
while not view["done"] and time.time() - t0 < 1200:
    view = call("GET", f"/v1/batches/{batch}?wait_s=30", timeout=90)
wall = time.time() - t0
worker.terminate()
worker.wait(timeout=300)
with open(out_path, "w") as f:
    for j in view["jobs"]:
        f.write(json.dumps(j.get("result", {"state": j.get("state")})) + "\n")
print(json.dumps({"wall_s": round(wall, 2), "done": view["done"], "n_done": view.get("n_done")}))
PY
  rc=$?
  kill "$serve_pid" "$redis_pid" 2>/dev/null; wait "$serve_pid" "$redis_pid" 2>/dev/null
  served=$(tail -1 "$logs/service-client.log")
  note "service mode, through the service: rc $rc, $served"
  note "$($python - "$out/service-direct.jsonl" "$direct_wall" "$out/service-served.jsonl" "$served" <<'PY'
import collections, json, sys
def rows(path):
    try:
        return [json.loads(l) for l in open(path) if l.strip()]
    except FileNotFoundError:
        return []
direct, served = rows(sys.argv[1]), rows(sys.argv[3])
direct_wall = float(sys.argv[2])
try:
    served_wall = float(json.loads(sys.argv[4])["wall_s"])
except Exception:
    served_wall = float("nan")
def line(name, rs, wall):
    counts = collections.Counter(r.get("status", "?") for r in rs)
    per_min = 60 * len(rs) / wall if wall > 0 else float("nan")
    return per_min, f"{name}: {len(rs)} candidates in {wall} s = {per_min:.1f} /min (" + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + ")"
d, dl = line("direct eval --batch", direct, direct_wall)
s, sl = line("service --gpus all", served, served_wall)
print(f"{dl}; {sl}; service/direct candidates/min = {s / d:.3f}")
PY
)"
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

# KB_PROBE=N (any mode): the kernelbench example evaluated N times in the child, then N times in a
# process of its own (the first build of its extension is shared), each alone on the machine: load
# phase and the runner's start step by step (ahead and on the evaluation's path), and the timings.
if [ -n "${KB_PROBE:-}" ]; then
  for where in in-child apart; do
    for i in $(seq "$KB_PROBE"); do
      $bin eval --task examples/vector_add/task.py --candidate examples/vector_add/kernelbench.py --device cuda \
        $([ "$where" = apart ] && echo --kernelbench-candidate-process || echo --kernelbench-in-child) --out "$out/kb-probe-$where.jsonl" >>"$logs/kb-probe.log" 2>&1
    done
    note "kernelbench example $where, $KB_PROBE times: $($python bench/phase_medians.py "$out/kb-probe-$where.jsonl" 2>&1)"
    $python - "$out/kb-probe-$where.jsonl" <<'PY' | tee -a "$summary"
import json, sys
for r in (json.loads(l) for l in open(sys.argv[1]) if l.strip()):
    print(f"  {r.get('status')}: runtime {r.get('runtime_us', 0):.1f} us, ref {r.get('ref_runtime_us', 0):.1f} us, "
          f"speedup {r.get('speedup', 0):.3f}, load {r.get('phases_ms', {}).get('load', 0):.0f} ms")
PY
  done
fi
