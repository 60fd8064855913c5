"""Where KernelEnv's candidates are evaluated: the evaluation service (ServiceEvaluator) or a local
`kernelrl eval --batch` (LocalEvaluator). Both take a batch of (task, code) pairs and return the
`kernelrl eval --json` records in order.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Protocol, Sequence, Tuple

from .client import ServiceClient
from .protocol import find_kernelrl

EXTENSIONS = {"native": ".cu", "host": ".cpp", "kernelbench": ".py"}


@dataclass(frozen=True)
class Task:
    """One kernel task: its reference source (the prompt shows it) and how evaluators find it."""

    source: str                  # the task file's text
    name: str = "task.py"        # the name results give it
    ref: Optional[str] = None    # a task-set path of the service (GET /v1/tasks); jobs then name it instead of sending the source
    path: Optional[str] = None   # the file on this machine (LocalEvaluator uses it as is)

    @staticmethod
    def from_file(path: str, ref: Optional[str] = None) -> "Task":
        p = Path(path)
        try:
            source = p.read_text()
        except OSError as e:
            raise ValueError(f"{path}: cannot read the task file: {e.strerror}") from e
        return Task(source=source, name=str(path), ref=ref, path=str(path))


class Evaluator(Protocol):
    def evaluate(self, items: Sequence[Tuple[Task, str]]) -> List[Dict[str, Any]]:
        """The result records of the candidates `code` on their tasks, in order."""
        ...


def _check_format(format: str) -> str:
    if format not in EXTENSIONS:
        raise ValueError(f"format: '{format}' is not one of {', '.join(EXTENSIONS)}")
    return format


@dataclass
class ServiceEvaluator:
    """Evaluates through `kernelrl serve`: one batch per call."""

    client: ServiceClient
    format: str = "native"
    options: Dict[str, Any] = field(default_factory=dict)  # a job's `options` (docs/service.md)
    rules: Optional[str] = None                             # "strict" | "kernelbench" | "observe"
    device: Optional[str] = None                            # "cuda" | "cpu"
    timeout_s: float = 3600.0

    def __post_init__(self) -> None:
        _check_format(self.format)

    def job(self, task: Task, code: str) -> Dict[str, Any]:
        job: Dict[str, Any] = {"task": task.ref} if task.ref else {"task_source": task.source, "task_name": task.name}
        job.update({"candidate": code, "candidate_name": "candidate" + EXTENSIONS[self.format], "format": self.format})
        if self.options:
            job["options"] = dict(self.options)
        if self.rules:
            job["rules"] = self.rules
        if self.device:
            job["device"] = self.device
        return job

    def evaluate(self, items: Sequence[Tuple[Task, str]]) -> List[Dict[str, Any]]:
        return self.client.evaluate([self.job(t, c) for t, c in items], self.timeout_s)


# Job options (docs/service.md) as `kernelrl eval` flags.
_EVAL_FLAGS = {"n_trials": "--trials", "atol": "--atol", "rtol": "--rtol", "n_warmup": "--warmup",
               "min_reps": "--min-reps", "max_reps": "--max-reps", "timing_budget_ms": "--timing-budget-ms",
               "timeout_correctness_s": "--timeout-correctness-s", "timeout_timing_s": "--timeout-timing-s",
               "precision": "--precision"}


@dataclass
class LocalEvaluator:
    """Evaluates with this machine's `kernelrl eval --batch` (no service): one engine start per call."""

    format: str = "native"
    options: Dict[str, Any] = field(default_factory=dict)  # the same names as a service job's options
    rules: Optional[str] = None
    device: Optional[str] = None
    binary: Optional[str] = None
    cache_dir: Optional[str] = None
    timeout_s: float = 3600.0

    def __post_init__(self) -> None:
        _check_format(self.format)
        self.binary = find_kernelrl(self.binary)

    def command(self, batch_file: str) -> List[str]:
        argv = [str(self.binary), "eval", "--batch", batch_file, "--json"]
        for name, value in self.options.items():
            if name == "time_kernels":
                if not value:
                    argv.append("--no-timing")
            elif name == "allow_tf32":
                if value:
                    argv.append("--allow-tf32")
            elif name in _EVAL_FLAGS:
                argv += [_EVAL_FLAGS[name], str(value)]
            else:
                raise ValueError(f"options.{name}: not an option LocalEvaluator can pass to `kernelrl eval` "
                                 f"(known: time_kernels, allow_tf32, {', '.join(_EVAL_FLAGS)})")
        if self.rules:
            argv += ["--rules", self.rules]
        if self.device:
            argv += ["--device", self.device]
        if self.cache_dir:
            argv += ["--cache-dir", self.cache_dir]
        return argv

    def evaluate(self, items: Sequence[Tuple[Task, str]]) -> List[Dict[str, Any]]:
        if not items:
            return []
        with tempfile.TemporaryDirectory(prefix="kernelrl-env-") as tmp:
            entries = []
            for i, (task, code) in enumerate(items):
                task_path = task.path
                if not task_path:
                    task_path = os.path.join(tmp, f"task_{i}.py")
                    Path(task_path).write_text(task.source)
                candidate = os.path.join(tmp, f"candidate_{i}{EXTENSIONS[self.format]}")
                Path(candidate).write_text(code)
                entries.append({"task": task_path, "candidate": candidate, "format": self.format})
            batch = os.path.join(tmp, "batch.json")
            Path(batch).write_text(json.dumps(entries))  # a JSON list (one line of JSON lines reads as one object)
            run = subprocess.run(self.command(batch), capture_output=True, text=True, timeout=self.timeout_s)
            if run.returncode not in (0, 1):
                raise RuntimeError(f"{' '.join(self.command(batch))} exited {run.returncode}: {run.stderr[-2000:]}")
            # Records come in the order evaluations finish; each names its candidate file.
            by_candidate = {}
            for line in run.stdout.splitlines():
                if line.startswith("{"):
                    record = json.loads(line)
                    by_candidate[record.get("candidate")] = record
        missing = [e["candidate"] for e in entries if e["candidate"] not in by_candidate]
        if missing:
            raise RuntimeError(f"kernelrl eval --batch gave no record for {missing[0]} ({len(missing)} of {len(items)} "
                               f"missing): {run.stderr[-2000:]}")
        return [by_candidate[e["candidate"]] for e in entries]
