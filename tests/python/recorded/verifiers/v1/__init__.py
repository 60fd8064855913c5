"""Recorded interface of verifiers 0.4.0's `verifiers.v1`, as far as the kernel adapter and its test
use it, in the standard library (recorded/README.md). The facts, read in 0.4.0's source:

- Configs and task data are pydantic models built by keyword, with `model_copy(update=...)`; an
  EnvConfig's `taskset` given as a dict becomes the config class of the taskset its `id` names.
- A taskset, a harness or an env is found by id: the installed top-level module of that name, whose
  `__all__` exports one Taskset subclass (and optionally one Env subclass, the taskset's env).
  `load_environment(config)` builds that env; `resolve_env_config(data)` validates its config.
- Task(data, config) with `with_data(**update)` (a copy); Taskset(config) with `load()`; iterating
  a taskset sets each task's `idx`.
- Env(config): every AgentConfig-valued field of its config is an agent of that name. `serving()`
  runs `start()` before the episodes and `stop()` after; `run_episode(task, ctx)` runs `setup`,
  `run(task, agents)`, `finalize`, and records an exception of theirs on the episode, not raising.
- `agent.interaction(task)` holds a rollout open: a task with a prompt speaks first (a bare
  `turn()` takes the model's first reply); `turn(text)` sends one user message and returns the
  Segment of the model's reply (messages: pydantic AssistantMessage objects, not dicts), or a
  terminated Segment once the agent's `max_turns` is spent; leaving the context closes the trace
  (stop condition `user_closed`) and scores it: the task's `@metric` and `@reward` methods, async,
  are gathered, each called with what it names of `task` (the data) and `trace`; an error of theirs
  is recorded on the trace, which is then not ok. The conversation the model is sent is the task's
  system prompt, its prompt, then every reply and user message in order.
- Trace: `messages`, `rewards` (name -> Reward(score, weight)), `metrics`, `record_reward(name,
  value, weight=1.0)`, `record_metric(name, value)`, `reward` (the weighted sum), `errors`, `ok`.

What the stand-in does differently: the model is called here, with one non-streamed POST
{base_url}/chat/completions, where 0.4.0 runs its `null` harness (a chat program that streams)
in a subprocess behind its interception server.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import importlib
import inspect
import json
import traceback
import urllib.request
import uuid
from dataclasses import dataclass, field
from typing import Any, Dict, Generic, List, Optional, TypeVar

RECORDED = True


class _Model:
    """A pydantic model's construction as the adapter uses it: the fields are the annotated class
    attributes, keyword arguments set them, defaults are copied per instance."""

    def __init__(self, **values: Any) -> None:
        fields = self._fields()
        unknown = sorted(set(values) - set(fields))
        if unknown:
            raise TypeError(f"{type(self).__name__}: no fields {unknown}")
        for name, default in fields.items():
            value = values[name] if name in values else copy.deepcopy(default)
            object.__setattr__(self, name, self._validate(name, value))

    @classmethod
    def _fields(cls) -> Dict[str, Any]:
        names: Dict[str, Any] = {}
        for klass in reversed(cls.__mro__):
            for name in getattr(klass, "__annotations__", {}):
                if not name.startswith("_"):
                    names[name] = getattr(cls, name, None)
        return names

    def _validate(self, name: str, value: Any) -> Any:
        return value

    def model_copy(self, update: Optional[Dict[str, Any]] = None) -> Any:
        clone = copy.copy(self)
        for name, value in (update or {}).items():
            object.__setattr__(clone, name, value)
        return clone

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={getattr(self, k)!r}' for k in self._fields())})"


class _Frozen(_Model):
    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(f"{type(self).__name__} is frozen; use model_copy(update=...)")


# -- messages -------------------------------------------------------------------------------------

class SystemMessage(_Model):
    role: str = "system"
    content: Any = ""


class UserMessage(_Model):
    role: str = "user"
    content: Any = ""


class AssistantMessage(_Model):
    role: str = "assistant"
    content: Optional[str] = None
    reasoning_content: Optional[str] = None


# -- tasks ----------------------------------------------------------------------------------------

class TaskData(_Frozen):
    idx: Optional[int] = None
    id: Optional[str] = None
    name: Optional[str] = None
    description: Optional[str] = None
    prompt: Any = None
    system_prompt: Optional[str] = None


class TaskConfig(_Model):
    pass


DataT = TypeVar("DataT")
TaskT = TypeVar("TaskT")
ConfigT = TypeVar("ConfigT")


def _type_argument(cls: type, base: type) -> Optional[type]:
    """The first generic argument of `cls`'s bases (or theirs) that subclasses `base`."""
    for klass in cls.__mro__:
        for origin in getattr(klass, "__orig_bases__", ()):
            for arg in getattr(origin, "__args__", ()):
                if isinstance(arg, type) and issubclass(arg, base):
                    return arg
    return None


def _marker(kind: str, func: Any, **tags: Any) -> Any:
    def mark(f: Any) -> Any:
        setattr(f, kind, True)
        for name, value in tags.items():
            setattr(f, name, value)
        return f
    return mark if func is None else mark(func)


def reward(func: Any = None, weight: float = 1.0, priority: int = 0) -> Any:
    """@reward or @reward(weight=...): a task method whose value Task.score records as a reward."""
    return _marker("reward", func, reward_weight=weight, reward_priority=priority)


def metric(func: Any = None, priority: int = 0) -> Any:
    """@metric: a task method whose value Task.score records as a metric."""
    return _marker("metric", func, metric_priority=priority)


def _invoke(fn: Any, available: Dict[str, Any]) -> Any:
    return fn(**{name: available[name] for name in inspect.signature(fn).parameters if name in available})


class Task(Generic[DataT]):
    def __init__(self, data: Any, config: Any = None) -> None:
        self.data = data
        self.config = config if config is not None else TaskConfig()

    def with_data(self, **update: Any) -> Any:
        clone = copy.copy(self)
        clone.data = self.data.model_copy(update=update)
        return clone

    def hooks(self, kind: str) -> List[Any]:
        names = sorted({n for klass in type(self).__mro__ for n, f in vars(klass).items() if hasattr(f, kind)})
        return [getattr(self, n) for n in names]

    async def score(self, trace: "Trace", runtime: Any = None) -> None:
        available = {"task": self.data, "trace": trace}
        metrics, rewards = self.hooks("metric"), self.hooks("reward")
        # The hooks are coroutines, gathered (a plain function's value is a TypeError).
        for fn, value in zip(metrics, await asyncio.gather(*(_invoke(fn, available) for fn in metrics))):
            trace.record_metric(fn.__name__, value)
        for fn, value in zip(rewards, await asyncio.gather(*(_invoke(fn, available) for fn in rewards))):
            trace.record_reward(fn.__name__, value, fn.reward_weight)


class TasksetConfig(_Model):
    id: str = ""
    task: TaskConfig = TaskConfig()
    system_prompt: Optional[str] = None


class Taskset(Generic[TaskT, ConfigT]):
    def __init__(self, config: Any) -> None:
        self.config = config

    def load(self) -> Any:
        raise NotImplementedError

    def __iter__(self) -> Any:
        return (task.with_data(idx=i) for i, task in enumerate(self.load()))


def _plugin(module_id: str, base: type) -> Optional[type]:
    module = importlib.import_module(module_id.replace("-", "_").lower())
    names = getattr(module, "__all__", None)
    if names is None:
        raise AttributeError(f"module {module.__name__!r} defines no __all__")
    found = [obj for n in names if isinstance(obj := getattr(module, n, None), type) and issubclass(obj, base)
             and obj is not base]
    if len(found) > 1:
        raise ValueError(f"module {module.__name__!r} exports {len(found)} {base.__name__} subclasses")
    return found[0] if found else None


# -- agents and traces ----------------------------------------------------------------------------

class AgentConfig(_Model):
    harness: Any = None
    runtime: Any = None
    model: Optional[str] = None
    client: Any = None
    max_turns: Optional[int] = None


class EvalClientConfig(_Model):
    base_url: str = ""
    api_key_var: str = "PRIME_API_KEY"


@dataclass(frozen=True)
class ModelContext:
    model: str
    client: EvalClientConfig
    sampling: Any = None


@dataclass
class Reward:
    score: float
    weight: float = 1.0

    @property
    def value(self) -> float:
        return self.score * self.weight


@dataclass
class Error:
    type: str
    message: str
    traceback: str = ""


@dataclass
class TraceTask:
    data: Any


@dataclass
class Trace:
    task: TraceTask
    messages: List[Any] = field(default_factory=list)
    rewards: Dict[str, Optional[Reward]] = field(default_factory=dict)
    metrics: Dict[str, float] = field(default_factory=dict)
    errors: List[Error] = field(default_factory=list)
    ok: bool = True
    stop_condition: Optional[str] = None
    id: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def reward(self) -> float:
        return sum(r.value for r in self.rewards.values() if r is not None)

    @property
    def num_turns(self) -> int:
        return sum(1 for m in self.messages if m.role == "assistant")

    def record_reward(self, name: str, value: float, weight: float = 1.0) -> None:
        self.rewards[name] = Reward(score=float(value), weight=float(weight))

    def record_metric(self, name: str, value: float) -> None:
        self.metrics[name] = float(value)

    def stop(self, condition: str) -> None:
        if self.stop_condition is None:
            self.stop_condition = condition


@dataclass(frozen=True)
class Segment:
    messages: List[Any]
    root_reply: Optional[str] = None
    terminated: bool = False

    @property
    def last_reply(self) -> str:
        for message in reversed(self.messages):
            if isinstance(message, AssistantMessage):
                return (message.content or "").strip()
        return ""


class Interaction:
    def __init__(self, agent: "Agent", task: Task) -> None:
        self._agent = agent
        self._task = task
        self._started = False
        self._over = False
        self._trace = Trace(task=TraceTask(task.data))
        if task.data.system_prompt is not None:
            self._trace.messages.append(SystemMessage(content=task.data.system_prompt))
        if isinstance(task.data.prompt, str):
            self._trace.messages.append(UserMessage(content=task.data.prompt))
        elif task.data.prompt is not None:
            self._trace.messages += list(task.data.prompt)

    @property
    def trace(self) -> Trace:
        return self._trace

    async def turn(self, message: Any = None) -> Segment:
        if self._over:
            raise RuntimeError("the exchange is over (the run ended); read interaction.trace")
        prompted = not self._started and self.trace.task.data.prompt is not None
        if (message is None) != prompted:
            raise ValueError("a task with a prompt speaks first: a bare turn(), then turn(message)")
        self._started = True
        limit = self._agent.config.max_turns
        if limit is not None and self.trace.num_turns >= limit:
            self._over = True
            self.trace.stop("max_turns")
            return Segment(messages=[], terminated=True)
        if isinstance(message, str):
            self.trace.messages.append(UserMessage(content=message))
        elif message is not None:
            self.trace.messages += list(message)
        reply = await asyncio.to_thread(self._agent.complete, self.trace.messages)
        self.trace.messages.append(reply)
        return Segment(messages=[reply], root_reply=None)

    async def close(self) -> Trace:
        """Ends the exchange and scores the trace with the task's metrics and rewards; their
        errors are recorded on the trace (ok False), not raised."""
        self.trace.stop("user_closed")
        try:
            await self._task.score(self.trace)
        except Exception as e:
            self.trace.errors.append(Error(type(e).__name__, str(e), traceback.format_exc()))
            self.trace.ok = False
        return self.trace


class Agent:
    def __init__(self, config: AgentConfig, ctx: ModelContext, completed: List[Trace]) -> None:
        self.config = config
        self.ctx = ctx
        self._completed = completed

    def complete(self, messages: List[Any]) -> AssistantMessage:
        wire = [{"role": m.role, "content": m.content} for m in messages]
        body = json.dumps({"model": self.ctx.model, "messages": wire}).encode()
        request = urllib.request.Request(self.ctx.client.base_url.rstrip("/") + "/chat/completions", data=body,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as r:
            answer = json.loads(r.read())["choices"][0]["message"]
        return AssistantMessage(content=answer.get("content"), reasoning_content=answer.get("reasoning_content"))

    @contextlib.asynccontextmanager
    async def interaction(self, task: Task) -> Any:
        exchange = Interaction(self, task)
        try:
            yield exchange
        finally:
            self._completed.append(await exchange.close())


class Agents:
    def __init__(self, agents: Dict[str, Agent]) -> None:
        self._agents = agents

    def __getattr__(self, name: str) -> Agent:
        agents = self.__dict__.get("_agents") or {}
        if name not in agents:
            raise AttributeError(f"no agent {name!r}; this config declares {sorted(agents)}")
        return agents[name]


# -- environments ---------------------------------------------------------------------------------

class EnvConfig(_Model):
    id: str = ""
    taskset: TasksetConfig = TasksetConfig()

    def _validate(self, name: str, value: Any) -> Any:
        if name == "taskset" and isinstance(value, dict):
            taskset = _plugin(value.get("id", ""), Taskset)
            config_type = _type_argument(taskset, TasksetConfig) if taskset else None
            return (config_type or TasksetConfig)(**value)
        if isinstance(getattr(type(self), name, None), AgentConfig) and isinstance(value, dict):
            return getattr(type(self), name).model_copy(update=value)
        return value


@dataclass
class Episode:
    traces: List[Trace] = field(default_factory=list)
    errors: List[Error] = field(default_factory=list)
    ok: bool = False
    id: str = field(default_factory=lambda: uuid.uuid4().hex)


class Env(Generic[ConfigT]):
    def __init__(self, config: Any) -> None:
        config_type = _type_argument(type(self), EnvConfig) or EnvConfig
        if not isinstance(config, config_type):
            raise TypeError(f"{type(self).__name__} declares Env[{config_type.__name__}], "
                            f"but was handed a {type(config).__name__}")
        if not config.taskset.id:
            raise ValueError(f"{type(self).__name__} needs a seed taskset (--env.taskset.id)")
        self.config = config
        taskset = _plugin(config.taskset.id, Taskset)
        if taskset is None:
            raise TypeError(f"taskset module {config.taskset.id!r} exports no Taskset subclass")
        self.taskset = taskset(config.taskset)

    async def setup(self, agents: Agents) -> None:
        pass

    async def run(self, task: Task, agents: Agents) -> None:
        raise NotImplementedError

    async def finalize(self, task: Task, episode: Episode) -> None:
        pass

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    @contextlib.asynccontextmanager
    async def serving(self) -> Any:
        try:
            await self.start()
            yield
        finally:
            await self.stop()

    async def run_episode(self, task: Task, ctx: ModelContext) -> Episode:
        episode = Episode()
        roles = {name: value for name in type(self.config)._fields()
                 if isinstance(value := getattr(self.config, name), AgentConfig)}
        agents = Agents({name: Agent(role.model_copy(update={"model": role.model or ctx.model}), ctx, episode.traces)
                         for name, role in roles.items()})
        try:
            await self.setup(agents)
            await self.run(task, agents)
            await self.finalize(task, episode)
        except Exception as e:  # the episode records its hooks' failures
            episode.errors.append(Error(type(e).__name__, str(e), traceback.format_exc()))
            return episode
        episode.ok = all(t.ok for t in episode.traces)
        return episode


def load_environment(config: EnvConfig) -> Env:
    env = _plugin(config.taskset.id, Env)
    if env is None:
        raise TypeError(f"taskset module {config.taskset.id!r} exports no Env subclass "
                        "(the stand-in has no SingleAgentEnv)")
    return env(config)


def resolve_env_config(data: Dict[str, Any]) -> EnvConfig:
    env = _plugin((data.get("taskset") or {}).get("id", ""), Env)
    config_type = (_type_argument(env, EnvConfig) if env else None) or EnvConfig
    return config_type(**data)
