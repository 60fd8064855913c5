"""The verifiers adapter against the recorded interface of verifiers 0.4.0 (recorded/verifiers/), with
a live local service and host tasks, always: the installed release, where there is one, is driven by
tests/python/release/check_verifiers.py (scripts/adapters-check.sh verifiers), and
test_recorded_interface_is_the_installed_one checks the stand-in's names against it.

The env is loaded as verifiers loads one (a taskset module exporting KernelTaskset and
KernelMultiTurnEnv, load_environment, serving, run_episode) and plays a scripted model: a crashing
kernel, then a correct one. The model is sent `kernelrl rollout`'s turn-1 prompt, then the feedback
KernelEnv gives; the trace's reward is the recipe's return of turn 1 (scores 0, 0.3: 0 + 0.4 * 0.3),
with best and last score as metrics.
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from kernelrl_testing import (CHEAP_OPTIONS, SCRIPTED_RESPONSES, SERVICE_DATA, SOURCE_DIR, TASK_ADD, TASK_ADD_REF,
                              LiveServiceTest, ScriptedChatServer)


def _import_recorded(name: str) -> None:
    """Makes `name` the recorded stand-in whatever is installed or was imported before (and only
    it: recorded/ is not put on the path, where the other frameworks' stand-ins are)."""
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]
    folder = SOURCE_DIR / "tests" / "python" / "recorded" / name
    spec = importlib.util.spec_from_file_location(name, folder / "__init__.py", submodule_search_locations=[str(folder)])
    assert spec is not None and spec.loader is not None
    sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sys.modules[name])


_import_recorded("verifiers")
import verifiers  # noqa: E402
import verifiers.v1 as vf  # noqa: E402

assert getattr(verifiers, "RECORDED", False), f"{verifiers.__file__}: not the recorded stand-in"
print("verifiers: testing against the recorded 0.4.0 interface (the installed release: "
      "scripts/adapters-check.sh verifiers)", file=sys.stderr)

from kernelrl_client import returns  # noqa: E402
from kernelrl_client.adapters.verifiers import KernelMultiTurnEnv, KernelTask, KernelTaskset  # noqa: E402

# What the adapter and this test use of verifiers.v1, by name: classes with their methods' and
# fields' names, functions with their parameters' names.
USED = {
    "TaskData": ["idx", "id", "name", "prompt", "system_prompt", "model_copy"],
    "Task": ["with_data", "data", "config", "score"],
    "reward": [],
    "metric": [],
    "TasksetConfig": ["id", "task"],
    "Taskset": ["load", "config", "__iter__"],
    "AgentConfig": ["harness", "runtime", "model", "max_turns"],
    "EnvConfig": ["id", "taskset"],
    "Env": ["run", "start", "stop", "setup", "finalize", "serving", "run_episode", "config"],
    "Agent": ["interaction"],
    "Interaction": ["turn", "close", "trace"],
    "Segment": ["messages", "terminated", "last_reply"],
    "Trace": ["messages", "rewards", "metrics", "errors", "ok", "record_reward", "record_metric", "reward"],
    "Episode": ["traces", "errors", "ok"],
    "AssistantMessage": ["role", "content", "reasoning_content"],
    "ModelContext": ["model", "client"],
    "EvalClientConfig": ["base_url", "api_key_var"],
    "load_environment": [],
    "resolve_env_config": [],
}


def surface(module) -> dict:
    """{name: sorted member names present, or parameter names for functions}, for the names in USED."""
    out = {}
    for name, members in USED.items():
        obj = getattr(module, name, None)
        if obj is None:
            out[name] = None
        elif inspect.isfunction(obj):
            out[name] = sorted(inspect.signature(obj).parameters)
        else:
            fields = set(getattr(obj, "model_fields", {}) or {}) | set(getattr(obj, "__dataclass_fields__", {}) or {})
            out[name] = sorted(m for m in members if m in fields or hasattr(obj, m)
                               or m in getattr(obj, "__annotations__", {})
                               or m in inspect.signature(obj.__init__).parameters)
    return out


def taskset_module(folder: Path, name: str) -> str:
    """The taskset package a user writes (docs/integrations.md), importable as `name`."""
    package = folder / name
    package.mkdir()
    (package / "__init__.py").write_text(
        "from kernelrl_client.adapters.verifiers import KernelMultiTurnEnv, KernelTaskset\n"
        "__all__ = ['KernelMultiTurnEnv', 'KernelTaskset']\n")
    sys.path.insert(0, str(folder))
    return name


class VerifiersAdapter(LiveServiceTest):
    def setUp(self) -> None:
        super().setUp()
        self.dir = Path(tempfile.mkdtemp(prefix="kernelrl-py-verifiers-"))
        self.model = ScriptedChatServer(SCRIPTED_RESPONSES[1:])  # crashing, then correct

    def tearDown(self) -> None:
        self.model.stop()
        sys.path[:] = [p for p in sys.path if p != str(self.dir)]
        shutil.rmtree(self.dir, ignore_errors=True)
        super().tearDown()

    def env(self, name: str, **overrides) -> KernelMultiTurnEnv:
        config = vf.resolve_env_config({
            "taskset": {"id": taskset_module(self.dir, name), "paths": [str(TASK_ADD)],
                        "task_set": f"service={SERVICE_DATA}"},
            "format": "host", "n_turns": 2, "service_url": self.service.url, "options": CHEAP_OPTIONS, **overrides})
        env = vf.load_environment(config)
        self.assertIsInstance(env, KernelMultiTurnEnv)
        env.protocol = self.protocol
        return env

    def play(self, env: KernelMultiTurnEnv):
        tasks = list(env.taskset)
        ctx = vf.ModelContext(model="scripted", client=vf.EvalClientConfig(base_url=self.model.base_url))

        async def run():
            async with env.serving():
                return await env.run_episode(tasks[0], ctx)

        return tasks, asyncio.run(run())

    def test_episode_and_reward(self) -> None:
        env = self.env("kernelrl_test_kernels")
        tasks, episode = self.play(env)
        self.assertEqual(len(tasks), 1)
        self.assertIsInstance(tasks[0], KernelTask)
        self.assertEqual((tasks[0].data.task_ref, tasks[0].data.task_source), (TASK_ADD_REF, TASK_ADD.read_text()))
        self.assertEqual(episode.errors, [])
        self.assertTrue(episode.ok)
        (trace,) = episode.traces
        self.assertEqual([m.role for m in trace.messages], ["system", "user", "assistant", "user", "assistant"])
        self.assertIsInstance(trace.messages[2], vf.AssistantMessage)  # objects, not dicts
        # The model is sent `kernelrl rollout`'s turn 1, then its answer and the feedback on it.
        first, second = self.model.requests
        self.assertEqual(first["messages"], self.protocol.prompt("host", TASK_ADD.read_text(), 1)["messages"])
        self.assertEqual(second["messages"][:2], first["messages"])
        self.assertEqual(second["messages"][2], {"role": "assistant", "content": SCRIPTED_RESPONSES[1]})
        self.assertIn("runtime error: ", second["messages"][3]["content"])
        self.assertEqual(second["messages"][3]["content"], trace.messages[3].content)
        self.assertEqual(trace.rewards["kernel_return"].score, returns([0.0, 0.3])[0])
        self.assertEqual(trace.reward, 0.4 * 0.3)
        self.assertEqual(trace.metrics, {"best_score": 0.3, "last_score": 0.3})
        self.assertEqual(trace.stop_condition, "user_closed")

    def test_agent_turn_limit_ends_the_episode(self) -> None:
        # An agent's own max_turns ends the exchange first: only the answers given are scored.
        env = self.env("kernelrl_test_kernels_limited", solver={"max_turns": 1})
        _, episode = self.play(env)
        self.assertTrue(episode.ok)
        (trace,) = episode.traces
        self.assertEqual([m.role for m in trace.messages], ["system", "user", "assistant"])
        self.assertEqual(len(self.model.requests), 1)
        self.assertEqual(trace.rewards["kernel_return"].score, 0.0)
        self.assertEqual(trace.metrics, {"best_score": 0.0, "last_score": 0.0})

    def test_bad_config_fails_the_episode_with_its_field(self) -> None:
        env = self.env("kernelrl_test_kernels_bad", n_turns=0)
        with self.assertRaisesRegex(ValueError, "n_turns: 0"):
            self.play(env)
        with self.assertRaisesRegex(ValueError, "task_set"):
            list(KernelTaskset(type(env.taskset.config)(paths=[str(TASK_ADD)], task_set="service")))
        with self.assertRaisesRegex(ValueError, "paths: .*nowhere"):
            list(KernelTaskset(type(env.taskset.config)(paths=[str(self.dir / "nowhere.py")])))
        # A KernelTask scored by another env (one that did not play its turns) is an error, not a 0.
        task = list(env.taskset)[0]
        with self.assertRaisesRegex(RuntimeError, "KernelMultiTurnEnv"):
            asyncio.run(task.score(vf.Trace(task=vf.TraceTask(task.data))))


class RecordedInterface(unittest.TestCase):
    maxDiff = None

    def test_recorded_interface_is_the_installed_one(self) -> None:
        # The stand-in's names against the installed release's, where this interpreter has one (a
        # child process: this one has the stand-in on its path).
        child_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        code = ("import importlib.util, inspect, json, sys\n"
                "if importlib.util.find_spec('verifiers') is None:\n"
                "    sys.exit(77)\n"
                "import verifiers\n"
                "if hasattr(verifiers, 'MultiTurnEnv'):  # before 0.4: the adapter uses vf.MultiTurnEnv\n"
                "    sys.exit(77)\n"
                "import verifiers.v1 as vf\n"
                f"USED = {USED!r}\n" + inspect.getsource(surface) +
                "print(json.dumps({'__version__': verifiers.__version__, **surface(vf)}))\n")
        child = subprocess.run([sys.executable, "-c", code], cwd=tempfile.gettempdir(), capture_output=True, text=True,
                               env=child_env)
        if child.returncode == 77:
            self.skipTest("verifiers >= 0.4 is not installed for this interpreter: the stand-in is checked against "
                          "the release by scripts/adapters-check.sh verifiers")
        self.assertEqual(child.returncode, 0, child.stderr[-2000:])
        installed = json.loads(child.stdout.splitlines()[-1])
        print(f"verifiers: the stand-in's names checked against the installed {installed.pop('__version__')}",
              file=sys.stderr)
        self.assertEqual(surface(vf), installed)


if __name__ == "__main__":
    unittest.main()
