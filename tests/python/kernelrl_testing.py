"""What the Python tests share: this build's kernelrl binary, a live local evaluation service
(a redis-server of their own on a free loopback port, `kernelrl serve` and one CPU
`kernelrl worker --redis`, as tests/service does) and a scripted OpenAI-compatible chat server
that records the prompts it is sent."""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path
from typing import Any, Dict, List, Optional

SOURCE_DIR = Path(os.environ.get("KERNELRL_SOURCE_DIR", Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(SOURCE_DIR / "python"))
KERNELRL = os.environ.get("KERNELRL_BINARY", str(SOURCE_DIR / "build" / "tools" / "kernelrl" / "kernelrl"))
os.environ["KERNELRL_BINARY"] = KERNELRL

SERVICE_DATA = SOURCE_DIR / "tests" / "service" / "data"
TASK_ADD = SERVICE_DATA / "task_add.py"
TASK_ADD_REF = "service/task_add.py"
# Cheapest honest host evaluation: one correctness trial, no timing (speedup 0, so a correct kernel scores w_correct).
CHEAP_OPTIONS = {"n_trials": 1, "time_kernels": False, "timeout_correctness_s": 5.0}


def data_text(name: str) -> str:
    return (SERVICE_DATA / name).read_text()


def host_answer(candidate_file: str, summary: str, thoughts: str = "") -> str:
    head = f"<think>{thoughts}</think>\n" if thoughts else ""
    return f"{head}Here is the kernel.\n```cpp\n{data_text(candidate_file)}```\n{summary}\n"


# One scripted trajectory of three turns: unparsable, crashing (a deterministic feedback line:
# a wrong output's line quotes values of the trial's random inputs), correct (with thoughts).
SCRIPTED_RESPONSES = [
    "I would add the vectors elementwise, but I forgot the code block.",
    host_answer("add_crash.cpp", "Adds the two inputs in one loop."),
    host_answer("add_ok.cpp", "Fixed: plain elementwise sum.", thoughts="the last version was wrong"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def eventually(ready, timeout_s: float, poll_s: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ready():
            return True
        time.sleep(poll_s)
    return bool(ready())


class LocalService:
    """redis-server + kernelrl serve + one CPU worker, in a scratch folder; stop() ends them."""

    def __init__(self) -> None:
        if not shutil.which("redis-server"):
            raise unittest.SkipTest("redis-server is not installed (scripts/setup.sh installs it)")
        self.dir = Path(tempfile.mkdtemp(prefix="kernelrl-py-service-"))
        self.processes: List[subprocess.Popen] = []
        redis_port = free_port()
        self.redis_url = f"redis://127.0.0.1:{redis_port}"
        self._start("redis", ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                              "--appendonly", "no", "--dir", str(self.dir)])
        if not eventually(lambda: self._redis_up(redis_port), 20):
            raise RuntimeError("redis-server did not start: " + self.log("redis"))
        serve = self._start("serve", [KERNELRL, "serve", "--redis", self.redis_url, "--listen", "127.0.0.1:0",
                                      "--tasks", f"service={SERVICE_DATA}", "--prefix", "py",
                                      "--allow-task-source"])  # `kernelrl rollout --eval-service` sends tasks as text
        port: List[int] = []

        def listening() -> bool:
            m = re.search(r"listening on port ([0-9]+)", self.log("serve"))
            if m:
                port.append(int(m.group(1)))
            return bool(m) or serve.poll() is not None

        if not eventually(listening, 30) or not port:
            raise RuntimeError("kernelrl serve did not start: " + self.log("serve"))
        self.url = f"http://127.0.0.1:{port[0]}"
        self._start("worker", [KERNELRL, "worker", "--redis", self.redis_url, "--prefix", "py", "--device", "cpu",
                               "--heartbeat-s", "0.25", "--cache-dir", str(self.dir / "compile-cache")],
                    env={"KERNELRL_CACHE_DIR": str(self.dir / "cache")})
        if not eventually(self._worker_alive, 60, 0.2):
            raise RuntimeError("no worker came up: " + self.log("worker"))

    def _start(self, name: str, argv: List[str], env: Optional[Dict[str, str]] = None) -> subprocess.Popen:
        log = open(self.dir / f"{name}.log", "w")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
                             start_new_session=True)
        self.processes.append(p)
        return p

    def log(self, name: str) -> str:
        try:
            return (self.dir / f"{name}.log").read_text()[-4000:]
        except OSError:
            return ""

    @staticmethod
    def _redis_up(port: int) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def _worker_alive(self) -> bool:
        import urllib.request
        try:
            with urllib.request.urlopen(self.url + "/healthz", timeout=2) as r:
                return json.loads(r.read()).get("workers_alive", 0) >= 1
        except OSError:
            return False

    def stop(self) -> None:
        for p in reversed(self.processes):  # worker, serve, then redis: each ours, by its process group
            if p.poll() is None:
                os.killpg(p.pid, 15)
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, 9)
                    p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class LiveServiceTest(unittest.TestCase):
    """A test case with a live local service and a `kernelrl env` protocol of its own, fresh for
    each test (`self.service`, `self.protocol`)."""

    def setUp(self) -> None:
        from kernelrl_client import EnvProtocol  # importable once SOURCE_DIR/python is on the path
        self.service = LocalService()
        self.protocol = EnvProtocol()

    def tearDown(self) -> None:
        self.protocol.close()
        self.service.stop()


class ScriptedChatServer:
    """POST /v1/chat/completions answered from `responses` in call order; requests recorded."""

    def __init__(self, responses: List[str]) -> None:
        self.responses = list(responses)
        self.requests: List[Dict[str, Any]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                index = min(len(outer.requests) - 1, len(outer.responses) - 1)
                reply = json.dumps({"choices": [{"index": 0, "finish_reason": "stop",
                                                 "message": {"role": "assistant", "content": outer.responses[index]}}],
                                    "usage": {"prompt_tokens": 11, "completion_tokens": 7}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
