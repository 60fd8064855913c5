#!/usr/bin/env python3
"""The engine under a long mixed load: N evaluations through one `kernelrl eval --batch`, every
K-th of them a faulty candidate (crash, hang, illegal address, device reset, trap, memory bomb,
hoarded device memory, lazy outputs, inputs zeroed, a global module hook), the rest honest kernels;
then the checks a long RL run relies on:

  - one result record per job, and none of them an engine error ("could not evaluate");
  - every faulty job not OK (its own record: RUNTIME_ERROR, TIMEOUT, REJECTED, WRONG_OUTPUT);
  - every honest job OK, its speedup within --band of the median of the same candidate's results
    (a fault beside it must not change an honest candidate's score);
  - no process of the batch left afterwards, and (on the GPU) the device memory back to where it started.

  scripts/soak.py --kernelrl build/tools/kernelrl/kernelrl --device cuda --n 1000 --out DIR
  scripts/soak.py --kernelrl ... --device cpu --n 40 --faulty-every 10 --out DIR   (the CI variant)

A soak longer than one time-limited call goes on with --resume in a later call: the same DIR (its
results.jsonl brought back), `kernelrl eval --resume` evaluates only the jobs without a record, and
the checks cover the records of every call (those on processes and device memory: this call's); an
engine error that a later call evaluated again stays in the file, listed in the summary's
engine_errors_evaluated_again, and is no longer its job's record.

Extra arguments after `--` go to `kernelrl eval` (e.g. --timeout-correctness-s 10). Writes
DIR/batch.json, DIR/results.jsonl, DIR/summary.json; prints the summary; exit 0 when every check
holds, 1 when one does not, 2 when the batch could not run. Standard library only.
"""
import argparse
import collections
import json
import os
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (task, candidate, format): honest candidates, each expected OK.
HONEST = {
    "cuda": [
        ("tests/ladder/task_softmax.py", "tests/ladder/native/correct_fast.cu", "native"),
        ("tests/ladder/task_softmax.py", "tests/ladder/native/correct_naive.cu", "native"),
        ("examples/vector_add/task.py", "examples/vector_add/native.cu", "native"),
        ("examples/softmax/task.py", "examples/softmax/native.cu", "native"),
    ],
    "cpu": [
        ("tests/ladder/task_softmax_small.py", "tests/ladder/host/correct.cpp", "host"),
    ],
}
# (task, candidate, format, kind): faulty candidates, each expected not OK.
FAULTY = {
    "cuda": [
        ("tests/ladder/task_softmax.py", "tests/adversarial/native/resets_the_device.cu", "native", "device reset"),
        ("tests/ladder/task_softmax.py", "tests/ladder/native/oob_write.cu", "native", "illegal address"),
        ("tests/ladder/task_softmax.py", "tests/ladder/native/abort.cu", "native", "crash (abort)"),
        ("tests/ladder/task_softmax.py", "tests/ladder/native/infinite_loop.cu", "native", "hang"),
        ("tests/ladder/task_softmax.py", "tests/adversarial/native/device_memory_bomb.cu", "native", "device memory bomb"),
        ("tests/ladder/task_softmax.py", "tests/adversarial/native/hoards_device_memory.cu", "native", "hoarded device memory"),
        ("tasks/level1/002_relu.py", "tests/kernelbench_corpus/adversarial/tensor_subclass_output.py", "kernelbench",
         "lazy outputs (tensor subclass)"),
        ("tasks/level1/002_relu.py", "tests/kernelbench_corpus/adversarial/zeroes_inputs.py", "kernelbench", "inputs zeroed"),
        ("tests/ladder/task_softmax.py", "tests/adversarial/native/traps.cu", "native", "trap"),
        ("tests/ladder/task_softmax.py", "tests/adversarial/kernelbench/global_forward_hook_cpu.py", "kernelbench",
         "global module hook"),
    ],
    "cpu": [
        ("tests/ladder/task_softmax_small.py", "tests/ladder/host/abort.cpp", "host", "crash (abort)"),
        ("tests/ladder/task_softmax_small.py", "tests/ladder/host/oob_write.cpp", "host", "out-of-bounds write"),
        ("tests/ladder/task_softmax_small.py", "tests/ladder/host/infinite_loop.cpp", "host", "hang"),
        ("tests/ladder/task_softmax_small.py", "tests/ladder/host/nan_output.cpp", "host", "wrong output"),
        ("tests/ladder/task_softmax_small.py", "tests/adversarial/kernelbench/global_forward_hook_cpu.py", "kernelbench",
         "global module hook"),
    ],
}


def make_batch(device, n, faulty_every):
    """Job i is faulty when (i + 1) % faulty_every == 0 (cycling through the faulty list), honest
    otherwise (cycling through the honest list)."""
    jobs, n_faulty = [], 0
    for i in range(n):
        if faulty_every > 0 and (i + 1) % faulty_every == 0:
            task, cand, fmt, kind = FAULTY[device][n_faulty % len(FAULTY[device])]
            n_faulty += 1
        else:
            task, cand, fmt = HONEST[device][(i - n_faulty) % len(HONEST[device])]
            kind = "honest"
        jobs.append({"task": task, "candidate": cand, "format": fmt, "device": device, "soak_kind": kind})
    return jobs


def processes_marked(marker):
    """Processes whose environment holds `marker` (the soak's batch and everything it forked or
    started without clearing its environment), other than this script."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if marker.encode() not in f.read():
                    continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                program = f.read().split(b"\0")[0].decode(errors="replace")
            found.append(f"{pid}:{program}")
        except OSError:
            continue
    return found


def gpu_memory_used_mib():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=30).stdout
        return sum(int(x) for x in out.split())
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def evaluated_again(jobs, records):
    """Which "could_not_evaluate" lines a resumed batch evaluated again: `kernelrl eval --resume`
    runs a job again when its line is one, so once a (task, candidate) has a result record for each
    of its jobs, its earlier engine-error lines were replaced (the earliest first). Returns their
    indices in records."""
    n_jobs = collections.Counter((j["task"], j["candidate"]) for j in jobs)
    results = collections.Counter((r.get("task"), r.get("candidate")) for r in records if "could_not_evaluate" not in r)
    replaceable = {key: max(0, results[key] + n - n_jobs[key]) for key, n in
                   collections.Counter((r.get("task"), r.get("candidate")) for r in records if "could_not_evaluate" in r).items()}
    again = set()
    for i, r in enumerate(records):
        key = (r.get("task"), r.get("candidate"))
        if "could_not_evaluate" in r and replaceable.get(key, 0) > 0:
            replaceable[key] -= 1
            again.add(i)
    return again


def check(jobs, records, band):
    """The checks on the records (in job order: the batch writes them as jobs finish, so they are
    matched by (task, candidate) in order of appearance). Engine errors that a resumed call
    evaluated again are kept in the file and counted apart, not as the job's record. Returns
    (summary dict, failures list)."""
    failures = []
    again = evaluated_again(jobs, records)
    replaced = [records[i] for i in sorted(again)]
    records = [r for i, r in enumerate(records) if i not in again]
    if len(records) != len(jobs):
        failures.append(f"{len(records)} records for {len(jobs)} jobs")
    engine_errors = [r for r in records if "could_not_evaluate" in r]
    for r in engine_errors[:5]:
        failures.append(f"engine error on {r.get('candidate')}: {r['could_not_evaluate']}")
    pending = collections.defaultdict(list)
    for j in jobs:
        pending[(j["task"], j["candidate"])].append(j["soak_kind"])
    by_kind = collections.defaultdict(collections.Counter)
    speedups = collections.defaultdict(list)
    for r in records:
        key = (r.get("task"), r.get("candidate"))
        kinds = pending.get(key)
        if not kinds:
            failures.append(f"a record for no job left: {key}")
            continue
        kind = kinds.pop(0)
        status = r.get("status", "could not evaluate" if "could_not_evaluate" in r else "?")
        by_kind[kind][status] += 1
        if kind == "honest":
            if status != "OK":
                failures.append(f"honest {r.get('candidate')}: {status} ({r.get('error', {}).get('message', '')[:160]})")
            elif r.get("speedup"):
                speedups[r["candidate"]].append(r["speedup"])
        elif status == "OK":
            failures.append(f"faulty ({kind}) {r.get('candidate')}: scored OK")
    spread = {}
    for cand, xs in speedups.items():
        med = statistics.median(xs)
        outside = [x for x in xs if band > 0 and abs(x / med - 1) > band]
        spread[cand] = {"n": len(xs), "median_speedup": round(med, 4), "min": round(min(xs), 4),
                        "max": round(max(xs), 4), "outside_band": len(outside)}
        if outside and band > 0:
            failures.append(f"honest {cand}: {len(outside)} of {len(xs)} speedups more than {band:.0%} from their median "
                            f"{med:.3f} (min {min(xs):.3f}, max {max(xs):.3f})")
    summary = {"jobs": len(jobs), "records": len(records), "engine_errors": len(engine_errors),
               "engine_errors_evaluated_again": [f"{r.get('candidate')}: {r['could_not_evaluate'][:200]}" for r in replaced],
               "statuses_by_kind": {k: dict(v) for k, v in sorted(by_kind.items())}, "honest_speedups": spread}
    return summary, failures


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernelrl", required=True, help="the kernelrl binary")
    p.add_argument("--device", choices=["cuda", "cpu"], required=True)
    p.add_argument("--n", type=int, default=1000, help="evaluations in all")
    p.add_argument("--faulty-every", type=int, default=10, help="every K-th job is faulty (10: 10%%)")
    p.add_argument("--band", type=float, default=0.25,
                   help="an honest speedup may differ this much from its median (0: not checked, e.g. on a busy CPU)")
    p.add_argument("--out", required=True, help="folder for batch.json, results.jsonl, summary.json")
    p.add_argument("--time-limit-s", type=float, default=None,
                   help="stop the batch after this many seconds and check the records it wrote (a soak that "
                        "must end inside a time-limited call)")
    p.add_argument("--resume", action="store_true",
                   help="go on with the soak whose records DIR/results.jsonl holds (same --n and --faulty-every)")
    p.add_argument("eval_args", nargs="*", help="after --: more arguments for kernelrl eval")
    a = p.parse_args()
    if a.n < 1:
        p.error("--n: must be at least 1")
    if a.time_limit_s is not None and a.time_limit_s <= 0:
        p.error(f"--time-limit-s: must be positive, not {a.time_limit_s:g}")
    os.makedirs(a.out, exist_ok=True)
    jobs = make_batch(a.device, a.n, a.faulty_every)
    batch_path, results_path = os.path.join(a.out, "batch.json"), os.path.join(a.out, "results.jsonl")
    batch_jobs = [{k: v for k, v in j.items() if k != "soak_kind"} for j in jobs]
    records_before = 0
    if a.resume:
        if not os.path.exists(results_path):
            p.error(f"--resume: {results_path} does not exist (no earlier soak to go on with)")
        try:
            earlier = json.load(open(batch_path))
        except (OSError, ValueError) as e:
            p.error(f"--resume: cannot read the earlier soak's {batch_path}: {e}")
        if earlier != batch_jobs:
            p.error(f"--resume: {batch_path} is another soak's batch (other --n, --faulty-every or --device)")
        records_before = sum(1 for line in open(results_path) if line.strip())
    else:
        with open(batch_path, "w") as f:
            json.dump(batch_jobs, f, indent=0)
        if os.path.exists(results_path):
            os.remove(results_path)
    memory_before = gpu_memory_used_mib() if a.device == "cuda" else None
    t0 = time.time()
    marker = f"KERNELRL_SOAK={os.getpid()}-{time.time_ns()}"
    env = dict(os.environ, KERNELRL_SOAK=marker.split("=", 1)[1])
    # A session of its own: a stop reaches the batch's every process, as Ctrl-C reaches a terminal's
    # foreground group.
    batch = subprocess.Popen([a.kernelrl, "eval", "--batch", batch_path, "--out", results_path,
                              *(["--resume"] if a.resume else []), *a.eval_args],
                             cwd=ROOT, env=env, stdout=subprocess.DEVNULL, start_new_session=True)
    stopped = False
    try:
        rc = batch.wait(timeout=a.time_limit_s)
    except subprocess.TimeoutExpired:
        # Stopped as a user would (Ctrl-C), then killed if it does not end: the records so far are
        # still checked, and so is what the batch left behind.
        stopped = True
        os.killpg(batch.pid, signal.SIGINT)
        try:
            rc = batch.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(batch.pid, signal.SIGKILL)
            rc = batch.wait()
    wall = time.time() - t0
    time.sleep(2)  # the engine's children are reaped by then
    if stopped:  # and a stopped batch's within the next 30 s
        for _ in range(30):
            if not processes_marked(marker):
                break
            time.sleep(1)
    try:
        records = [json.loads(line) for line in open(results_path) if line.strip()]
    except FileNotFoundError:
        print(f"soak: kernelrl eval --batch wrote no results (exit {rc})", file=sys.stderr)
        return 2
    summary, failures = check(jobs, records, a.band)
    summary.update({"device": a.device, "eval_exit": rc, "wall_s": round(wall, 1), "stopped_at_time_limit": stopped,
                    "records_before_this_call": records_before,
                    "evaluations_per_min": round(60 * (len(records) - records_before) / wall, 1) if wall > 0 else None})
    left = processes_marked(marker)
    summary["processes_left"] = left
    if left:
        failures.append(f"processes left: {left[:5]}")
    if a.device == "cuda":
        after = gpu_memory_used_mib()
        summary["gpu_memory_mib_before_after"] = [memory_before, after]
        if memory_before is not None and after is not None and after > memory_before + 64:
            failures.append(f"GPU memory used {after} MiB after the soak, {memory_before} MiB before")
    if stopped:
        failures.append(f"the batch was stopped at the time limit ({a.time_limit_s:g} s); its records so far are checked")
    elif rc not in (0,):
        failures.append(f"kernelrl eval --batch exited {rc}")
    summary["failures"] = failures
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary, indent=2))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
