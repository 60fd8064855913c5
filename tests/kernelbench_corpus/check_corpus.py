# A quick check of this corpus outside the engine (not a candidate; the engine's own check is
# `kernelrl eval --batch tests/kernelbench_corpus/manifest.json --check-expect`).
#
# Builds every candidate of manifest.json in parallel (one Python process per load_inline), then
# runs each entry the way the engine does: ModelNew and the task's Model built after the same
# manual_seed, both in eval mode, TF32 off, inputs drawn with the device as default, the candidate
# called before the reference under no_grad. For each entry it reports the output's type, shape and
# dtype, the element errors against the per-dtype tolerance (float32/float16 1e-2, bfloat16 2e-2,
# integers exact) and the relative L2 bound, whether the inputs changed, the PyTorch operators the
# call dispatched outside the strict rule set's allowed list, stream-creation imports of the built
# extension, and a rough median time against the reference. Each line of the output is one JSON
# record; "guess" is the status these observations imply ("?" where only the engine can tell).
# Not reproduced: the static format rules (src/compile/python_scan.cpp: side_stream_torch.py and
# tensor_subclass_output.py are refused there before building), the sandbox, output poisoning and
# the timing defenses. Run on the GPU machine (torch 2.11, nvcc 13) in about 6 minutes on 16 cores.
#
#   python3 tests/kernelbench_corpus/check_corpus.py [--jobs 12] [--only SUBSTRING] [--skip-build]
import argparse
import concurrent.futures
import glob
import json
import os
import runpy
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

# src/eval/op_audit.cpp's allowed operators (allocation, views, copies, fills, reading a scalar).
ALLOWED_OPS = set("""
empty empty_like empty_strided new_empty new_empty_strided zeros zeros_like ones ones_like full full_like
new_zeros new_ones new_full fill_ zero_ scalar_tensor lift_fresh lift_fresh_copy resize_
view _unsafe_view _reshape_alias reshape as_strided alias detach t transpose permute expand expand_as squeeze
unsqueeze select slice split split_with_sizes unbind narrow chunk flatten unflatten view_as movedim swapaxes
swapdims diagonal unfold set_
clone copy_ _to_copy to contiguous _copy_from _copy_from_and_resize _local_scalar_dense item is_nonzero
""".split())

# Imports of a built extension that the engine refuses (a subset of compile/import_check.hpp).
REFUSED_IMPORTS = ("cudaStreamCreate", "cuStreamCreate", "pthread_create", "dlopen", "dlsym", "cudaGetDriverEntryPoint",
                   "cuGetProcAddress")

TOLERANCE = {"torch.float32": (1e-2, 1e-2), "torch.float64": (1e-2, 1e-2), "torch.float16": (1e-2, 1e-2),
             "torch.bfloat16": (2e-2, 2e-2)}


def load_manifest():
    with open(os.path.join(HERE, "manifest.json")) as f:
        return json.load(f)


def build_one(candidate, ext_dir):
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=ext_dir)
    t0 = time.time()
    p = subprocess.run([sys.executable, "-c", "import runpy, sys; runpy.run_path(sys.argv[1], run_name='kbcorpus_build')",
                        os.path.join(ROOT, candidate)], capture_output=True, text=True, env=env, cwd=ROOT)
    return {"build": candidate, "rc": p.returncode, "build_s": round(time.time() - t0, 1),
            "log_tail": (p.stdout + p.stderr)[-2500:] if p.returncode else ""}


def refused_imports(candidate, ext_dir):
    src = open(os.path.join(ROOT, candidate)).read()
    hits = []
    for name in set(__import__("re").findall(r'name="([^"]+)"', src)):
        for so in glob.glob(os.path.join(ext_dir, name, "*.so")):
            p = subprocess.run(["nm", "-D", "--undefined-only", so], capture_output=True, text=True)
            hits += [line.split()[-1] for line in p.stdout.splitlines() if line.split()[-1].startswith(REFUSED_IMPORTS)]
    return sorted(set(hits))


def make_audit(torch):
    from torch.utils._python_dispatch import TorchDispatchMode

    class Audit(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.refused = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = func._schema.name
            if not (name.startswith("aten::") and name[6:] in ALLOWED_OPS) and name not in self.refused:
                self.refused.append(name)
            return func(*args, **(kwargs or {}))

    return Audit


def compare(torch, out, ref):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    refs = ref if isinstance(ref, (tuple, list)) else (ref,)
    if len(outs) != len(refs):
        return {"ok": False, "why": "output count %d, expected %d" % (len(outs), len(refs))}
    res = {"ok": True, "max_abs": 0.0, "n_bad": 0, "rel_l2": 0.0, "plain_tensor": True}
    for o, r in zip(outs, refs):
        if type(o) is not torch.Tensor:
            res["plain_tensor"] = False
            res["type"] = type(o).__name__
            if isinstance(o, torch.Tensor):
                o = o.as_subclass(torch.Tensor)
        if not isinstance(o, torch.Tensor) or o.shape != r.shape or o.dtype != r.dtype:
            res.update(ok=False, why="got %s %s, expected %s %s" % (
                getattr(o, "dtype", type(o)), tuple(getattr(o, "shape", ())), r.dtype, tuple(r.shape)))
            return res
        if r.is_floating_point():
            atol, rtol = TOLERANCE[str(r.dtype)]
            od, rd = o.double(), r.double()
            d = (od - rd).abs()
            bad = ~(d <= atol + rtol * rd.abs())
            res["n_bad"] += int(bad.sum().item())
            res["max_abs"] = max(res["max_abs"], float(d.max().item()) if d.numel() else 0.0)
            denom = rd.norm().item()
            rel = (od - rd).norm().item() / denom if denom > 0 else float((od - rd).norm().item())
            res["rel_l2"] = max(res["rel_l2"], rel)
            if res["n_bad"] or not rel <= rtol:
                res["ok"] = False
        else:
            n_bad = int((o != r).sum().item())
            res["n_bad"] += n_bad
            res["ok"] = res["ok"] and n_bad == 0
    return res


def check_one(index, n_trials=3):
    import torch

    entry = load_manifest()[index]
    dev = torch.device(entry["device"])
    cuda = dev.type == "cuda"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    task = runpy.run_path(os.path.join(ROOT, entry["task"]), run_name="kbcorpus_task")
    cand = runpy.run_path(os.path.join(ROOT, entry["candidate"]), run_name="kbcorpus_candidate")
    init = task["get_init_inputs"]()
    torch.manual_seed(1234)
    ref_model = task["Model"](*init).to(dev).eval()
    torch.manual_seed(1234)
    new_model = cand["ModelNew"](*init).to(dev).eval()
    Audit = make_audit(torch)
    rec = {"candidate": entry["candidate"], "task": entry["task"], "expect": entry["expect"],
           "rules": entry.get("rules", "strict"), "kind": entry["kind"], "trials": [], "refused_ops": []}

    def draw(seed):
        torch.manual_seed(seed)
        if cuda:
            with dev:
                xs = task["get_inputs"]()
        else:
            xs = task["get_inputs"]()
        return [x.to(dev) if isinstance(x, torch.Tensor) else x for x in xs]

    inputs = None
    for trial in range(n_trials):
        inputs = draw(1000 + trial)
        before = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        audit = Audit()
        with torch.no_grad():
            with audit:
                out = new_model(*inputs)
            if cuda:
                torch.cuda.synchronize()
            changed = any(isinstance(a, torch.Tensor) and not torch.equal(a, b) for a, b in zip(inputs, before))
            ref = ref_model(*before)
            if cuda:
                torch.cuda.synchronize()
        cmp = compare(torch, out, ref)
        cmp["inputs_changed"] = changed
        rec["trials"].append(cmp)
        rec["refused_ops"] += [op for op in audit.refused if op not in rec["refused_ops"]]
        del out, ref

    if cuda:
        def median_ms(model):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            times = []
            with torch.no_grad():
                for i in range(13):
                    start.record()
                    model(*inputs)
                    end.record()
                    torch.cuda.synchronize()
                    if i >= 3:
                        times.append(start.elapsed_time(end))
            return sorted(times)[len(times) // 2]
        rec["ref_ms"] = round(median_ms(ref_model), 3)
        rec["new_ms"] = round(median_ms(new_model), 3)
    return rec


def guess(rec, imports):
    if "error" in rec:
        return "RUNTIME_ERROR?"
    strict = rec.get("rules", "strict") == "strict"
    if imports or not all(t.get("plain_tensor", True) for t in rec["trials"]):
        return "REJECTED"
    if strict and rec["refused_ops"]:
        return "REJECTED"
    if any(t.get("inputs_changed") or not t["ok"] for t in rec["trials"]):
        return "WRONG_OUTPUT"
    return "OK"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=12)
    ap.add_argument("--checks", type=int, default=3, help="entries checked at once")
    ap.add_argument("--only", default="")
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument("--one", type=int, default=-1, help=argparse.SUPPRESS)
    ap.add_argument("--ext-dir", default=os.environ.get("TORCH_EXTENSIONS_DIR", "/tmp/kbcorpus-ext"))
    ap.add_argument("--log", default=os.path.join(os.environ.get("OUT", "/tmp"), "kbcorpus_check.jsonl"))
    args = ap.parse_args()
    os.environ["TORCH_EXTENSIONS_DIR"] = args.ext_dir
    if args.one >= 0:
        print(json.dumps(check_one(args.one)), flush=True)
        return
    manifest = load_manifest()
    picked = [i for i, e in enumerate(manifest) if args.only in e["candidate"] or args.only in e["task"]]
    log = open(args.log, "a")

    def emit(rec):
        line = json.dumps(rec)
        print(line, flush=True)
        log.write(line + "\n")
        log.flush()

    built = {}
    if not args.skip_build:
        cands = sorted({manifest[i]["candidate"] for i in picked})
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            for r in pool.map(lambda c: build_one(c, args.ext_dir), cands):
                built[r["build"]] = r["rc"]
                emit(r)

    def run_check(i):
        e = manifest[i]
        if built.get(e["candidate"], 0) != 0:
            return {"candidate": e["candidate"], "expect": e["expect"], "error": "build failed"}, []
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", str(i), "--ext-dir", args.ext_dir],
                           capture_output=True, text=True, cwd=ROOT, timeout=600)
        lines = p.stdout.strip().splitlines()
        if p.returncode == 0 and lines:
            rec = json.loads(lines[-1])
        else:
            rec = {"candidate": e["candidate"], "expect": e["expect"], "rules": e.get("rules", "strict"),
                   "error": (p.stdout + p.stderr)[-2000:]}
        return rec, refused_imports(e["candidate"], args.ext_dir)

    summary = []
    with concurrent.futures.ThreadPoolExecutor(args.checks) as pool:
        for rec, imports in pool.map(run_check, picked):
            rec["refused_imports"] = imports
            rec["guess"] = guess(rec, imports)
            rec["matches_expect"] = rec["guess"] == rec["expect"]
            emit(rec)
            summary.append(rec)
    n_match = sum(r["matches_expect"] for r in summary)
    print("%d of %d entries behave as expected" % (n_match, len(summary)), flush=True)
    for r in summary:
        if not r["matches_expect"]:
            print("  differs: %s (%s rules): expect %s, guess %s" % (r["candidate"], r.get("rules"), r["expect"],
                                                                   r["guess"]), flush=True)


if __name__ == "__main__":
    main()
