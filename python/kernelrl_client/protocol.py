"""The `kernelrl env` command as a Python object: the rollout's prompts, response parsing, feedback
lines, scores and credit, computed by the C++ that `kernelrl rollout` runs (src/rollout/env_protocol.hpp),
so the package never keeps a copy of the templates or the parser's rules.

One long-lived child process answers JSON lines in order; calls are serialised by a lock.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from typing import Any, Dict, List, Optional, Sequence

Message = Dict[str, str]


class ProtocolError(RuntimeError):
    """`kernelrl env` refused a request (the message names the field) or could not be run."""


def find_kernelrl(binary: Optional[str] = None) -> str:
    """The kernelrl binary: `binary`, else $KERNELRL_BINARY, else `kernelrl` on PATH."""
    candidate = binary or os.environ.get("KERNELRL_BINARY") or shutil.which("kernelrl")
    if not candidate:
        raise ProtocolError("no kernelrl binary: pass binary=, set KERNELRL_BINARY or put kernelrl on PATH "
                            "(build it with `ninja -C build kernelrl`)")
    if not os.access(candidate, os.X_OK):
        raise ProtocolError(f"{candidate}: not an executable kernelrl binary")
    return candidate


class EnvProtocol:
    """A `kernelrl env` child process. Thread-safe; close() (or the context manager) ends it."""

    def __init__(self, binary: Optional[str] = None):
        self.binary = find_kernelrl(binary)
        self._lock = threading.Lock()
        self._process = subprocess.Popen([self.binary, "env"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1)

    def __getstate__(self) -> Dict[str, Any]:
        """Pickles as its binary alone (trainers send reward functions to their worker processes
        by pickling them, TRL's AsyncGRPOTrainer among them): the copy starts its own `kernelrl env`."""
        return {"binary": self.binary}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__init__(state["binary"])

    def __enter__(self) -> "EnvProtocol":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self._process.poll() is None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        for stream in (self._process.stdout, self._process.stderr):
            if stream is not None:
                stream.close()

    def call(self, request: Dict[str, Any]) -> Dict[str, Any]:
        """Sends one request, returns its answer; ProtocolError if it was refused."""
        with self._lock:
            if self._process.poll() is not None:
                raise ProtocolError(f"{self.binary} env exited ({self._process.returncode}): {self._stderr()}")
            assert self._process.stdin is not None and self._process.stdout is not None
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
            line = self._process.stdout.readline()
        if not line:
            raise ProtocolError(f"{self.binary} env ended without answering: {self._stderr()}")
        answer = json.loads(line)
        if "error" in answer:
            raise ProtocolError(f"kernelrl env {request.get('op')}: {answer['error']}")
        return answer

    def _stderr(self) -> str:
        try:
            return (self._process.stderr.read() if self._process.stderr else "")[-2000:]
        except (OSError, ValueError):
            return ""

    # -- the requests (src/rollout/env_protocol.hpp) -------------------------------------------

    def prompt(self, format: str, task_source: str, turn: int, previous: Sequence[Dict[str, str]] = (),
               **options: Any) -> Dict[str, Any]:
        """{messages, n_attempts_shown, n_attempts_dropped}; options: gpu, max_chars, prompts_dir, example."""
        return self.call({"op": "prompt", "format": format, "task_source": task_source, "turn": turn,
                          "previous": list(previous), **_present(options)})

    def parse(self, format: str, content: str, reasoning: str = "", lenient: bool = False) -> Dict[str, Any]:
        """{ok, parse_error (None when ok), thoughts, code, summary}."""
        return self.call({"op": "parse", "format": format, "content": content, "reasoning": reasoning,
                          "lenient": lenient})

    def outcome(self, result: Optional[Dict[str, Any]] = None, parse_error: Optional[str] = None,
                policy_error: Optional[str] = None, **score: Any) -> Dict[str, Any]:
        """{feedback, score, correct, speedup}; score: w_correct, speedup_cap."""
        return self.call({"op": "outcome", "result": result, "parse_error": parse_error,
                          "policy_error": policy_error, **_present(score)})

    def credit(self, scores: Sequence[Sequence[float]], **config: Any) -> Dict[str, List[List[float]]]:
        """{returns, advantages}; config: gamma, return ("sum"|"max"), advantage, divide_by_std, eps."""
        return self.call({"op": "credit", "scores": [list(s) for s in scores], **_present(config)})


def _present(options: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in options.items() if v is not None}
