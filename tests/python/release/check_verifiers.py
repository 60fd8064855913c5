"""The verifiers adapter against the installed verifiers release (scripts/adapters-check.sh
verifiers; cwd tests/python), as verifiers itself runs an environment, against a live local service
(redis-server, `kernelrl serve`, a CPU worker) and a scripted OpenAI-compatible model:

- verifiers 0.4: its eval runner (`run_eval`, what `vf-eval` runs) plays KernelMultiTurnEnv over a
  KernelTaskset of one host task, loaded by id from the package a user writes; the `null` chat
  harness runs in a local subprocess (prepared by uv) and reaches the model through verifiers'
  interception server.
- verifiers 0.3: Environment.evaluate over kernel_dataset's rows (vf.MultiTurnEnv).

Two rollouts of two turns; the script answers crash, correct, unparsable, crash in call order.
Checked: the model's first request is `kernelrl rollout`'s turn 1 (system and user message); each
later request is that, an answer and, byte for byte, the feedback a KernelEnv stepping that answer
gives; the traces hold verifiers' pydantic messages with the answers sent; the rollout with the
correct kernel has reward kernel_return equal to the recipe's return of its turn scores (> 0), the
other 0. Prints a JSON summary; exit 0 when all hold, 1 when one fails, 77 without verifiers.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Dict, List

TESTS_PYTHON = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS_PYTHON))

import kernelrl_testing  # noqa: E402
from kernelrl_testing import (  # noqa: E402
    CHEAP_OPTIONS, SCRIPTED_RESPONSES, SERVICE_DATA, TASK_ADD, TASK_ADD_REF, LocalService, ScriptedChatServer)

# kernelrl_testing puts the source tree's python/ first on the path; this check is of the
# package as installed in the venv.
sys.path = [p for p in sys.path if Path(p).resolve() != (kernelrl_testing.SOURCE_DIR / "python").resolve()]

try:
    import verifiers
except ImportError:
    print("check_verifiers: verifiers is not installed (scripts/adapters-check.sh verifiers installs it)",
          file=sys.stderr)
    sys.exit(77)

import kernelrl_client  # noqa: E402
from kernelrl_client import EnvConfig, KernelEnv, Task, returns  # noqa: E402
from kernelrl_client.adapters.common import make_evaluator  # noqa: E402

LABELS = {SCRIPTED_RESPONSES[0]: "unparsable", SCRIPTED_RESPONSES[1]: "crash", SCRIPTED_RESPONSES[2]: "correct"}
# Call order. 0.4 runs one episode at a time here; 0.3 interleaves a group's rollouts: what is
# checked holds in any order (the one correct answer lands in exactly one rollout).
SCRIPT = [SCRIPTED_RESPONSES[1], SCRIPTED_RESPONSES[2], SCRIPTED_RESPONSES[0], SCRIPTED_RESPONSES[1]]
N_TURNS = 2


def streaming_chat_server(responses):
    """kernelrl_testing's scripted server, answering `"stream": true` requests (verifiers' chat
    harness always streams) as server-sent chat.completion.chunk events."""
    server = ScriptedChatServer(responses)
    lock = threading.Lock()  # requests may come together (verifiers 0.3 runs a group's rollouts at once)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                server.requests.append(body)
                n = len(server.requests)
            content = server.responses[min(n, len(server.responses)) - 1]
            head = {"id": f"scripted-{n}", "created": int(time.time()), "model": body.get("model", "")}
            if body.get("stream"):
                chunks = [{"index": 0, "delta": {"role": "assistant", "content": content}, "finish_reason": None},
                          {"index": 0, "delta": {}, "finish_reason": "stop"}]
                events = [{**head, "object": "chat.completion.chunk", "choices": [c]} for c in chunks]
                events.append({**head, "object": "chat.completion.chunk", "choices": [],
                               "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}})
                reply = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"
                kind = "text/event-stream"
            else:
                reply = json.dumps({**head, "object": "chat.completion", "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}).encode()
                kind = "application/json"
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args) -> None:
            pass

    server.server.RequestHandlerClass = Handler
    return server


def expected_feedback(service_url: str, answers):
    """The user message after each answer as KernelEnv gives it, stepping the same answers."""
    env = KernelEnv(make_evaluator("host", service_url, options=CHEAP_OPTIONS), EnvConfig(format="host", n_turns=N_TURNS))
    try:
        first = env.reset(Task(source=TASK_ADD.read_text(), ref=TASK_ADD_REF))
        return first, [env.step(a)[0]["content"] for a in answers], list(env.scores)
    finally:
        assert env.protocol is not None
        env.protocol.close()


def rollouts_v1(work: Path, service_url: str, model_url: str) -> List[Dict[str, Any]]:
    """verifiers 0.4: `run_eval` (what `vf-eval` runs) over the taskset package a user writes."""
    from verifiers.v1.cli.eval.runner import run_eval
    from verifiers.v1.configs.cli.eval import EvalConfig

    # A verifiers taskset is an installed top-level module exporting it and its env (docs/integrations.md).
    package = work / "plugins" / "kernelrl_check_kernels"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "from kernelrl_client.adapters.verifiers import KernelMultiTurnEnv, KernelTaskset\n"
        "__all__ = ['KernelMultiTurnEnv', 'KernelTaskset']\n")
    sys.path.insert(0, str(package.parent))
    os.environ["KERNELRL_CHECK_API_KEY"] = "scripted"
    config = EvalConfig.model_validate({
        "env": {"taskset": {"id": "kernelrl_check_kernels", "paths": [str(TASK_ADD)],
                            "task_set": f"service={SERVICE_DATA}"},
                "format": "host", "n_turns": N_TURNS, "service_url": service_url, "options": CHEAP_OPTIONS},
        "model": "scripted", "client": {"base_url": model_url, "api_key_var": "KERNELRL_CHECK_API_KEY"},
        "num_rollouts": 2, "max_concurrent": 1, "push": False, "rich": None, "output_dir": str(work / "outputs")})
    rollouts = []
    for episode in asyncio.run(run_eval(config)):
        errors = [f"{e.type}: {e.message}" for e in episode.errors]
        errors += [f"{e.type}: {e.message}" for t in episode.traces for e in t.errors]
        if len(episode.traces) != 1:
            errors.append(f"{len(episode.traces)} traces, want 1")
        trace = episode.traces[0] if episode.traces else None
        rollouts.append({"messages": list(trace.messages) if trace else [], "reward": trace.reward if trace else None,
                         "rewards": {k: r.score for k, r in trace.rewards.items() if r is not None} if trace else {},
                         "metrics": dict(trace.metrics) if trace else {}, "errors": errors})
    return rollouts


def rollouts_legacy(service_url: str, model_url: str) -> List[Dict[str, Any]]:
    """verifiers 0.3: Environment.evaluate over kernel_dataset's rows."""
    from datasets import Dataset
    from kernelrl_client.adapters.verifiers import KernelMultiTurnEnv, kernel_dataset

    seen: List[Any] = []

    class Recorded(KernelMultiTurnEnv):  # what env_response is handed, as it is handed it
        async def env_response(self, messages, state, **kwargs):
            seen.append(messages)
            return await super().env_response(messages, state, **kwargs)

    rows = kernel_dataset([Task(source=TASK_ADD.read_text(), ref=TASK_ADD_REF)], format="host")
    env = Recorded(dataset=Dataset.from_list(rows), format="host", n_turns=N_TURNS, service_url=service_url,
                   options=CHEAP_OPTIONS)
    os.environ["KERNELRL_CHECK_API_KEY"] = "scripted"
    client = verifiers.ClientConfig(api_base_url=model_url, api_key_var="KERNELRL_CHECK_API_KEY", max_retries=0)
    results = asyncio.run(env.evaluate(client=client, model="scripted", num_examples=1, rollouts_per_example=2,
                                       max_concurrent=1))
    handed = sorted({type(m).__module__.split(".")[0] + "." + type(m).__name__ for messages in seen for m in messages})
    return [{"messages": list(output["prompt"]) + list(output["completion"]), "handed": handed,
             "reward": output["reward"], "rewards": {"kernel_return": output["reward"]},
             "metrics": {k: v for k, v in output["metrics"].items() if k in ("best_score", "last_score")},
             "errors": [str(output["error"])] if output.get("error") else []} for output in results["outputs"]]


def field(message: Any, name: str) -> Any:
    """Read here without the package's helpers: pydantic messages (or the dicts of serialised output)."""
    return message.get(name) if isinstance(message, dict) else getattr(message, name)


def main() -> int:
    installed = Path(kernelrl_client.__file__).resolve()
    if kernelrl_testing.SOURCE_DIR.resolve() / "python" in installed.parents:
        print(f"check_verifiers: kernelrl_client imported from the source tree ({installed}), not the venv",
              file=sys.stderr)
        return 1
    # verifiers' chat harness is a PEP 723 script it prepares with uv (installed in this venv);
    # uv's downloads stay in the venv.
    os.environ["PATH"] = os.path.join(sys.prefix, "bin") + os.pathsep + os.environ.get("PATH", "")
    os.environ.setdefault("UV_CACHE_DIR", os.path.join(sys.prefix, "uv-cache"))
    legacy = hasattr(verifiers, "MultiTurnEnv")
    failures: List[str] = []
    summary: Dict[str, Any] = {"verifiers": getattr(verifiers, "__version__", "?"),
                               "interface": "vf.MultiTurnEnv" if legacy else "verifiers.v1 (Taskset, Env, run_eval)",
                               "kernelrl_client": str(installed.parent), "rollouts": []}
    service = LocalService()
    model = streaming_chat_server(SCRIPT)
    try:
        with tempfile.TemporaryDirectory(prefix="kernelrl-check-verifiers-") as tmp:
            rollouts = (rollouts_legacy(service.url, model.base_url) if legacy
                        else rollouts_v1(Path(tmp), service.url, model.base_url))
        for rollout in rollouts:
            messages = rollout["messages"]
            # The types of the messages the adapter was handed: the trace's, or (legacy: the output is
            # serialised) what env_response received.
            kinds = rollout.get("handed") or sorted({type(m).__module__.split(".")[0] + "." + type(m).__name__
                                                     for m in messages})
            labels = [LABELS.get(field(m, "content"), "?") for m in messages if field(m, "role") == "assistant"]
            summary["rollouts"].append({"answers": labels, "reward": rollout["reward"], "rewards": rollout["rewards"],
                                        "metrics": rollout["metrics"], "message_types": kinds})
            if rollout["errors"] or "?" in labels:
                failures.append(f"rollout {labels}: errors {rollout['errors']}")
                continue
            by_label = {v: k for k, v in LABELS.items()}
            first, feedback, scores = expected_feedback(service.url, [by_label[label] for label in labels])
            users = [field(m, "content") for m in messages if field(m, "role") == "user"]
            systems = [field(m, "content") for m in messages if field(m, "role") == "system"]
            if systems != [first[0]["content"]] or users[:1] != [first[1]["content"]]:
                failures.append(f"rollout {labels}: turn 1's prompt is not `kernelrl rollout`'s")
            if users[1:] != feedback[:-1]:
                failures.append(f"rollout {labels}: the feedback in the conversation is not KernelEnv's: {users[1:]!r}")
            want = returns(scores)[0]
            if abs(rollout["reward"] - want) > 1e-9 or ("correct" in labels) != (rollout["reward"] > 0):
                failures.append(f"rollout {labels}: reward {rollout['reward']}, want {want} (turn scores {scores})")
            if not all(k.startswith("verifiers.") for k in kinds):
                failures.append(f"rollout {labels}: the adapter was handed {kinds}, not verifiers' pydantic messages")
        # Rollouts may interleave (0.3.1 runs a group's rollouts together): whatever the order, the script's
        # answers were all given, and its one correct answer is in exactly one rollout.
        answered = sorted(a for r in summary["rollouts"] for a in r["answers"])
        if answered != sorted(LABELS[a] for a in SCRIPT) or len(summary["rollouts"]) != 2:
            failures.append(f"the rollouts answered {[r['answers'] for r in summary['rollouts']]}, "
                            f"want the script's {len(SCRIPT)} answers")
        # What the model was sent: turn 1's prompt, or that, one answer of the script's and the feedback on it.
        turn_1 = [[m["role"], m["content"]] for m in expected_feedback(service.url, [])[0]]
        summary["model_requests"] = len(model.requests)
        for i, request in enumerate(model.requests):
            sent = [[m["role"], m["content"]] for m in request["messages"]]
            answer = sent[2][1] if len(sent) == 4 else None
            if sent[:2] != turn_1 or len(sent) not in (2, 4) or (
                    answer is not None and sent[3] != ["user", expected_feedback(service.url, [answer])[1][0]]):
                failures.append(f"request {i + 1} is neither turn 1's prompt nor that, an answer and its feedback")
        if sorted(len(r["messages"]) for r in model.requests) != [2, 2, 4, 4]:
            failures.append(f"the model was sent {len(model.requests)} requests, want two of turn 1 and two of turn 2")
    except Exception as e:  # the check reports, whatever broke
        failures.append(f"{type(e).__name__}: {e}")
    finally:
        model.stop()
        service.stop()
    summary["failures"] = failures
    summary["ok"] = not failures
    print(json.dumps(summary, indent=1))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
