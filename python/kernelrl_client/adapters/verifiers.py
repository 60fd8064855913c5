"""verifiers (prime-rl): kernel tasks as a verifiers environment, multi-turn: each model answer is
one KernelEnv turn, the environment's reply the next turn's prompt.

verifiers 0.4 (`verifiers.v1`: Taskset, Task, Env): KernelTaskset yields a KernelTask per task file
(KernelTasksetConfig: paths, and the service task set they belong to). KernelMultiTurnEnv, the env
the taskset's package exports, opens an interaction of its `solver` agent on turn 1's prompt and
answers each reply with the next prompt until `n_turns` answers; when the exchange closes,
verifiers' scoring records the task's reward `kernel_return` (the recipe's return of turn 1: the
discounted sum of the turn scores, gamma 0.4) and its metrics `best_score` and `last_score`.
verifiers finds a taskset by the name of an installed top-level module; docs/integrations.md shows
the three-line package that re-exports these classes.

verifiers 0.3 (`vf.MultiTurnEnv`, kept there in verifiers.legacy): KernelMultiTurnEnv is a
MultiTurnEnv over the rows of kernel_dataset() ("prompt": turn 1's messages, "info": task_source,
task_ref) with a rubric of the same reward (the two scores as zero-weight metrics).

Both hand the adapter pydantic messages (from verifiers 0.1.11 on); common.message_field reads them
and dicts alike.
"""

from __future__ import annotations

import asyncio
import glob
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import verifiers

from ..credit import CreditConfig
from ..env import EnvConfig, KernelEnv
from ..evaluators import Evaluator, Task
from ..protocol import EnvProtocol
from .common import completion_text, make_evaluator, message_field, task_from_fields, task_row

# verifiers 0.4's package root exposes nothing but `verifiers.v1`; 0.3's exposes vf.MultiTurnEnv.
MULTI_TURN_ENV_API = hasattr(verifiers, "MultiTurnEnv")

STATE_KEY = "kernelrl_env"
LOCK_KEY = "kernelrl_lock"


def kernel_dataset(tasks: List[Task], format: str = "native",
                   protocol: Optional[EnvProtocol] = None) -> List[Dict[str, Any]]:
    """Rows {"prompt", "info"} for the verifiers 0.3 KernelMultiTurnEnv; datasets.Dataset.from_list(rows)."""
    protocol = protocol or EnvProtocol()
    return [{"prompt": protocol.prompt(format, t.source, 1, [])["messages"], "info": task_row(t)} for t in tasks]


def _answer(messages: Any) -> Tuple[str, str]:
    """The last assistant message's text and its separate reasoning (servers that split it off)."""
    last = next((m for m in reversed(list(messages or [])) if message_field(m, "role") == "assistant"), None)
    reasoning = (message_field(last, "reasoning_content") or message_field(last, "reasoning") or "") if last else ""
    return completion_text(list(messages or [])), str(reasoning)


if not MULTI_TURN_ENV_API:
    import verifiers.v1 as vf

    class KernelTaskData(vf.TaskData):
        task_source: str = ""             # the task file's text (the prompt shows it)
        task_ref: Optional[str] = None    # its task-set path on the service (GET /v1/tasks), if it has one

    class KernelTask(vf.Task[KernelTaskData]):
        """One kernel task. KernelMultiTurnEnv plays a copy of it carrying turn 1's prompt and the
        episode's trajectory, whose rewards verifiers' scoring reads when the exchange closes."""

        trajectory: Optional[KernelEnv] = None
        credit: CreditConfig = CreditConfig()

        def kernel_task(self) -> Task:
            return task_from_fields(self.data.task_source, self.data.task_ref, self.data.name)

        def _played(self) -> KernelEnv:
            if self.trajectory is None:
                raise RuntimeError("a KernelTask is scored in the episodes of KernelMultiTurnEnv (the env its "
                                   "taskset's package exports), which play its turns")
            return self.trajectory

        @vf.reward
        async def kernel_return(self) -> float:
            env = self._played()
            return env.returns(self.credit)[0] if env.scores else 0.0

        @vf.metric
        async def best_score(self) -> float:
            return max(self._played().scores, default=0.0)

        @vf.metric
        async def last_score(self) -> float:
            scores = self._played().scores
            return scores[-1] if scores else 0.0

    class KernelTasksetConfig(vf.TasksetConfig):
        paths: List[str] = []
        """Task files, folders (every *.py below, sorted) or glob patterns."""
        task_set: Optional[str] = None
        """NAME=DIR as given to `kernelrl serve --tasks`: files under DIR are sent to the service
        as NAME/<path below DIR>; the others as their source text (a service with --allow-task-source)."""

    class KernelTaskset(vf.Taskset[KernelTask, KernelTasksetConfig]):
        def load(self) -> List[KernelTask]:
            tasks = []
            for path in _task_files(self.config.paths):
                ref = _task_ref(path, self.config.task_set)
                data = KernelTaskData(name=str(path), id=ref or str(path), task_source=path.read_text(), task_ref=ref)
                tasks.append(KernelTask(data, self.config.task))
            return tasks

    class KernelEnvConfig(vf.EnvConfig):
        solver: vf.AgentConfig = vf.AgentConfig(harness={"id": "null"}, runtime={"type": "subprocess"})
        """The policy: a tool-less chat loop (the `null` harness) in a local subprocess by default."""
        format: str = "native"
        """The candidate format the model writes: native | host | kernelbench."""
        n_turns: int = 4
        """Model answers per episode (Kevin: 4)."""
        service_url: Optional[str] = None
        """The evaluation service (default $KERNELRL_SERVICE_URL; none: the local `kernelrl eval`)."""
        token_file: Optional[str] = None
        """The service token's file (default $KERNELRL_SERVICE_TOKEN_FILE)."""
        options: Dict[str, Any] = {}
        """A job's evaluation options (docs/service.md), e.g. {"n_trials": 5}."""
        gamma: float = 0.4
        """The reward's discount per later turn (CreditConfig.gamma)."""

    class KernelMultiTurnEnv(vf.Env[KernelEnvConfig]):
        """The episodes of a KernelTaskset: one KernelEnv trajectory each, played by the `solver` agent."""

        evaluator: Optional[Evaluator] = None  # set before serving() to evaluate elsewhere
        protocol: Optional[EnvProtocol] = None  # set before serving() to share one; else start() starts one
        _owned: Optional[EnvProtocol] = None

        async def start(self) -> None:
            """Checks the config and builds what the episodes share (serving() calls it before them)."""
            self.env_config = EnvConfig(format=self.config.format, n_turns=self.config.n_turns)
            if self.env_config.n_turns < 1:
                raise ValueError(f"n_turns: {self.env_config.n_turns} must be at least 1")
            self.credit = CreditConfig(gamma=self.config.gamma)
            if self.evaluator is None:
                self.evaluator = make_evaluator(self.config.format, self.config.service_url, self.config.token_file,
                                                self.config.options)
            if self.protocol is None:
                self.protocol = self._owned = EnvProtocol()

        async def stop(self) -> None:
            if self._owned is not None:
                self._owned.close()
                self.protocol = self._owned = None

        async def run(self, task: vf.Task, agents: vf.Agents) -> None:
            if self.evaluator is None or self.protocol is None:
                raise RuntimeError("KernelMultiTurnEnv.run() outside serving(): start() builds the evaluator")
            if not isinstance(task, KernelTask):
                raise TypeError(f"KernelMultiTurnEnv plays KernelTask rows, not {type(task).__name__}")
            env = KernelEnv(self.evaluator, self.env_config, self.protocol)
            system, user = await asyncio.to_thread(env.reset, task.kernel_task())
            played = task.with_data(system_prompt=system["content"], prompt=user["content"])
            played.trajectory, played.credit = env, self.credit
            async with agents.solver.interaction(played) as exchange:  # leaving it scores the trace
                segment = await exchange.turn()
                while not segment.terminated:  # terminated: a limit of the agent's ended the run first
                    response, reasoning = _answer(segment.messages)
                    feedback, _, done, _ = await asyncio.to_thread(env.step, response, reasoning)
                    if done:
                        break
                    segment = await exchange.turn(feedback["content"])

    def _task_files(patterns: List[str]) -> List[Path]:
        files: List[Path] = []
        for pattern in patterns:
            if os.path.isdir(pattern):
                files += sorted(Path(pattern).rglob("*.py"))
            elif glob.has_magic(pattern):
                files += [Path(p) for p in sorted(glob.glob(pattern, recursive=True))]
            elif os.path.isfile(pattern):
                files.append(Path(pattern))
            else:
                raise ValueError(f"taskset.paths: {pattern} is not a task file, a folder or a pattern that matches")
        return files

    def _task_ref(path: Path, task_set: Optional[str]) -> Optional[str]:
        if not task_set:
            return None
        name, sep, root = task_set.partition("=")
        if not sep or not name or not root:
            raise ValueError(f"taskset.task_set: '{task_set}' is not NAME=DIR (as given to `kernelrl serve --tasks`)")
        try:
            return f"{name}/{path.resolve().relative_to(Path(root).resolve()).as_posix()}"
        except ValueError:
            return None

else:
    vf = verifiers

    def _assistant_turns(completion: Any) -> List[Tuple[str, str]]:
        if isinstance(completion, str):
            return [(completion, "")]
        return [_answer([m]) for m in completion or [] if message_field(m, "role") == "assistant"]

    async def _catch_up(state: Dict[str, Any], completion: Any) -> KernelEnv:
        """The rollout's env after stepping the answers it has not seen yet (the loop stops after
        the last model answer without asking the environment for a reply). The rubric's functions
        may run concurrently: one lock per rollout."""
        env: KernelEnv = state[STATE_KEY]
        async with state.setdefault(LOCK_KEY, asyncio.Lock()):
            answers = _assistant_turns(completion)
            while not env.done and env.turn - 1 < len(answers):
                await asyncio.to_thread(env.step, *answers[env.turn - 1])
        return env

    def kernel_rubric(credit: CreditConfig = CreditConfig()) -> "vf.Rubric":
        async def kernel_return(completion: Any, state: Dict[str, Any], **kwargs: Any) -> float:
            env = await _catch_up(state, completion)
            return env.returns(credit)[0] if env.scores else 0.0

        async def best_score(completion: Any, state: Dict[str, Any], **kwargs: Any) -> float:
            env = await _catch_up(state, completion)
            return max(env.scores, default=0.0)

        async def last_score(completion: Any, state: Dict[str, Any], **kwargs: Any) -> float:
            env = await _catch_up(state, completion)
            return env.scores[-1] if env.scores else 0.0

        return vf.Rubric(funcs=[kernel_return, best_score, last_score], weights=[1.0, 0.0, 0.0])

    class KernelMultiTurnEnv(vf.MultiTurnEnv):  # type: ignore[no-redef]
        def __init__(self, dataset: Any, format: str = "native", n_turns: int = 4, service_url: Optional[str] = None,
                     token_file: Optional[str] = None, options: Optional[Dict[str, Any]] = None,
                     credit: CreditConfig = CreditConfig(), evaluator: Optional[Evaluator] = None,
                     protocol: Optional[EnvProtocol] = None, **kwargs: Any):
            self.env_config = EnvConfig(format=format, n_turns=n_turns)
            self.kernel_evaluator = evaluator or make_evaluator(format, service_url, token_file, options)
            self.kernel_protocol = protocol or EnvProtocol()
            super().__init__(dataset=dataset, rubric=kernel_rubric(credit), max_turns=n_turns, **kwargs)

        async def setup_state(self, state: Dict[str, Any], **kwargs: Any) -> Dict[str, Any]:
            info = state.get("info") or {}
            env = KernelEnv(self.kernel_evaluator, self.env_config, self.kernel_protocol)
            env.reset(task_from_fields(info.get("task_source"), info.get("task_ref"), info.get("task_name")))
            state[STATE_KEY] = env
            return state

        async def env_response(self, messages: Any, state: Dict[str, Any], **kwargs: Any) -> List[Any]:
            env: KernelEnv = state[STATE_KEY]
            async with state.setdefault(LOCK_KEY, asyncio.Lock()):
                if env.done:  # a loop that asks once more after the last turn
                    return []
                feedback, _, _, _ = await asyncio.to_thread(env.step, *_answer(messages))
            user_message = getattr(vf, "UserMessage", None)  # a dict is accepted too, converted at a cost
            return [user_message(**feedback) if user_message is not None else feedback]
