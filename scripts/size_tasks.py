#!/usr/bin/python3
"""Derives a smaller size of each task of a manifest for runs on a CPU (the manifest's
"sizes": {"small": {NAME: VALUE}}, tasks/README.md) and writes it into the manifest.

A size replaces module-level integer constants of the task file. Only constants that get_inputs()
reads and get_init_inputs() does not (neither directly nor through a module-level value built from
them, like normalized_shape = (out_channels, height, width)) are shrunk: the init inputs are the
task's constants a candidate may take from the source (channels, kernel sizes, normalised
shapes), while what only shapes the inputs (batch, rows, spatial sizes) is read from the tensors.
The largest such constant is halved while the inputs exceed --max-input-mb or one eager forward on
one CPU thread exceeds --max-eager-ms (several halvings at once when far over); a halving that
makes the reference fail or its output empty is undone and that constant kept. Each task's size
is written into the manifest as soon as it is found, and tasks that have one are skipped (--redo
recomputes them). `kernelrl tasks check DIR --size small` then checks the result.

usage: /usr/bin/python3 scripts/size_tasks.py tasks/level1 tasks/level2 [--size small] [--max-input-mb 4]
                                              [--max-eager-ms 20] [--dry-run] [--redo]
"""
import argparse
import ast
import json
import math
import pathlib
import re
import sys
import time
import types

import torch


def module_int_constants(tree):
    """{name: value} of top-level `NAME = <int>` assignments."""
    out = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Constant) and type(node.value.value) is int):
            out[node.targets[0].id] = node.value.value
    return out


def names_read_by(tree, function):
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return set()


def with_what_they_derive_from(tree, names):
    """`names` and, transitively, the names their module-level assignments read
    (normalized_shape = (out_channels, height, width) fixes height and width too)."""
    reads = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            reads[node.targets[0].id] = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
    closed, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name not in closed:
            closed.add(name)
            todo.extend(reads.get(name, ()))
    return closed


def resized(source, values):
    """The source with each `NAME = <int>` module-level line set to values[NAME] (task/sizes.cpp)."""
    lines = source.split("\n")
    for name, value in values.items():
        pattern = re.compile(r"^%s(\s*=\s*)[0-9_]+" % re.escape(name))
        lines = [pattern.sub(lambda m: name + m.group(1) + str(value), line) for line in lines]
    return "\n".join(lines)


def load(path, source=None):
    source = path.read_text() if source is None else source
    module = types.ModuleType("sized_" + path.stem)
    exec(compile(source, str(path), "exec"), module.__dict__)
    return source, module


def tensors(values):
    if isinstance(values, torch.Tensor):
        return [values]
    if isinstance(values, (list, tuple)):
        return [t for v in values for t in tensors(v)]
    return []


class NoDraws:
    """Within it torch's random factories return uninitialised tensors of the same shape and dtype,
    so the inputs' size is known without drawing gigabytes (pages never touched are never paid)."""

    names = ("randn", "rand", "randint", "randn_like", "rand_like", "randint_like")

    def __enter__(self):
        self.saved = {n: getattr(torch, n) for n in self.names}

        def shaped(float_default):
            def make(*args, size=None, dtype=None, **kw):
                if size is None:
                    tail = [a for a in args if isinstance(a, (tuple, list, torch.Size))]
                    size = tail[-1] if tail else [a for a in args if isinstance(a, int)]
                return torch.empty(*size, dtype=dtype or (torch.float32 if float_default else torch.int64))
            return make

        def like(t, *args, dtype=None, **kw):
            return torch.empty_like(t, dtype=dtype)

        torch.randn = torch.rand = shaped(True)
        torch.randint = shaped(False)
        torch.randn_like = torch.rand_like = like
        torch.randint_like = lambda t, *a, dtype=None, **kw: torch.empty_like(t, dtype=dtype)
        return self

    def __exit__(self, *exc):
        for n, f in self.saved.items():
            setattr(torch, n, f)


def input_bytes(module):
    torch.manual_seed(0)
    with NoDraws():
        return sum(t.numel() * t.element_size() for t in tensors(module.get_inputs()))


def eager_ms(module):
    """Fastest of two forwards after one warm-up; raises what the reference raises."""
    torch.manual_seed(0)
    model = module.Model(*module.get_init_inputs()).eval()
    inputs = module.get_inputs()
    times = []
    with torch.no_grad():
        out = model(*inputs)
        if sum(t.numel() for t in tensors(out)) == 0:
            raise ValueError("empty output")
        for _ in range(2):
            t0 = time.perf_counter()
            model(*inputs)
            times.append((time.perf_counter() - t0) * 1e3)
    return min(times)  # the least disturbed by other work on the machine


def small_size(path, max_bytes, max_ms):
    source, module = load(path)
    tree = ast.parse(source)
    constants = module_int_constants(tree)
    fixed = with_what_they_derive_from(tree, names_read_by(tree, "get_init_inputs"))
    scalable = {n: v for n, v in constants.items() if n in names_read_by(tree, "get_inputs") and n not in fixed and v > 1}
    values = dict(scalable)
    frozen = set()

    def apply():
        nonlocal module
        module = load(path, resized(source, values))[1]

    def halve(times):
        """Halves the largest movable constant `times` times; False when none is left."""
        for _ in range(times):
            movable = [n for n in values if n not in frozen and values[n] > 1]
            if not movable:
                return False
            name = max(movable, key=lambda n: values[n])
            values[name] //= 2
        return True

    def shrink_until(fits, ratio):
        """Halves until fits() (True, or raises on a size the task refuses) holds: as many times at
        once as ratio() says the size is over (the work grows at least linearly in each constant);
        a step the task refuses is undone and retried one halving at a time, and a single halving
        it refuses freezes that constant."""
        single = False
        while True:
            before = dict(values)
            try:
                if fits():
                    return
                steps = 1 if single else max(1, int(math.log2(ratio())))
            except Exception:
                if before == scalable_start:
                    raise
                values.clear()
                values.update(previous)
                if single:
                    frozen.add(next(n for n in before if before[n] != previous[n]))
                single = not single
                apply()
                continue
            previous = dict(before)
            if not halve(steps):
                return
            apply()

    # Inputs first, without running the reference (full-size forwards take minutes on a CPU);
    # where the reference refuses the inputs' size, halvings are undone one by one (history).
    history = []
    scalable_start = dict(values)
    apply()
    shrink_until(lambda: history.append(dict(values)) or input_bytes(module) <= max_bytes,
                 lambda: input_bytes(module) / max_bytes)
    while True:
        try:
            eager_ms(module)
            break
        except Exception:
            history.pop()
            if not history:
                raise
            values.clear()
            values.update(history[-1])
            apply()
    frozen.clear()
    scalable_start = dict(values)
    measured = {}

    def eager_fits():
        measured["ms"] = eager_ms(module)
        return measured["ms"] <= max_ms

    shrink_until(eager_fits, lambda: measured["ms"] / max_ms)
    apply()
    final_ms = eager_ms(module)
    changed = {n: v for n, v in values.items() if v != constants[n]}
    return changed, input_bytes(module), final_ms


def manifest_text(manifest, old_text):
    """The manifest in the layout its file already has: one line per task, or indented JSON."""
    if '\n    {"file"' not in old_text:
        return json.dumps(manifest, indent=2) + "\n"
    lines = ",\n".join("    " + json.dumps(e) for e in manifest["tasks"])
    return '{\n  "level": %d,\n  "tasks": [\n%s\n  ]\n}\n' % (manifest["level"], lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=pathlib.Path)
    parser.add_argument("--size", default="small")
    parser.add_argument("--max-input-mb", type=float, default=4.0)
    parser.add_argument("--max-eager-ms", type=float, default=20.0)
    parser.add_argument("--dry-run", action="store_true", help="print the sizes, leave the manifests alone")
    parser.add_argument("--redo", action="store_true", help="also tasks that already have the size")
    args = parser.parse_args()
    torch.set_num_threads(1)
    for folder in args.folders:
        manifest_path = folder / "manifest.json"
        manifest = json.loads(manifest_path.read_text())
        for entry in manifest["tasks"]:
            if args.size in entry.get("sizes", {}) and not args.redo:
                continue
            changed, n_bytes, ms = small_size(folder / entry["file"], args.max_input_mb * 2**20, args.max_eager_ms)
            print(f"{folder / entry['file']}: {changed} inputs {n_bytes / 2**20:.2f} MB eager {ms:.1f} ms", flush=True)
            entry.setdefault("sizes", {})[args.size] = changed
            if not args.dry_run:  # after every task: an interrupted run resumes where it stopped
                manifest_path.write_text(manifest_text(manifest, manifest_path.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
