"""verl: the kernel score as a custom reward function, and the dataset rows the verl adapters read.

verl loads a custom reward function by file path as a standalone module (not as part of this
package), so this file imports the package by absolute name only and never imports verl: it loads
in verl's reward workers whatever the verl release.

    reward:
      custom_reward_function:
        path: pkg://kernelrl_client.adapters.verl_reward   # or this file's path
        name: compute_score
        reward_kwargs: {format: kernelbench, options: {n_trials: 5}}

verl's reward manager (`naive`, the default) calls compute_score once per sample, in a thread of
its worker, as compute_score(data_source=, solution_str=, ground_truth=, extra_info=,
**reward_kwargs); ground_truth is the task file's text and extra_info may carry task_ref.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence as AnySequence
from typing import Any, Dict, List, Optional, Sequence, Tuple

from kernelrl_client.adapters.common import make_evaluator, task_from_fields, task_row
from kernelrl_client.env import EnvConfig, KernelEnv
from kernelrl_client.evaluators import Evaluator, Task
from kernelrl_client.protocol import EnvProtocol

DATA_SOURCE = "kernelrl"

_shared: Dict[Tuple[Any, ...], Tuple[Evaluator, EnvProtocol]] = {}
_shared_lock = threading.Lock()


def plain(value: Any) -> Any:
    """`value` with verl's config containers (OmegaConf DictConfig / ListConfig) as dicts and lists,
    so job options serialise as JSON."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, AnySequence) and not isinstance(value, (str, bytes)):
        return [plain(v) for v in value]
    return value


def shared_evaluator_and_protocol(format: str, service_url: Optional[str] = None, token_file: Optional[str] = None,
                                  options: Optional[Dict[str, Any]] = None) -> Tuple[Evaluator, EnvProtocol]:
    """One evaluator and one `kernelrl env` process per configuration and worker process, shared by
    every call and trajectory there (both are thread-safe); they live as long as the process."""
    options = plain(options or {})
    key = (format, service_url, token_file, repr(sorted(options.items())))
    with _shared_lock:
        if key not in _shared:
            _shared[key] = (make_evaluator(format, service_url, token_file, options), EnvProtocol())
        return _shared[key]


def task_of_row(ground_truth: Optional[str], extra_info: Optional[Mapping[str, Any]]) -> Task:
    """The task a verl row names: extra_info.task_source, else reward_model.ground_truth (the task
    file's text), with extra_info.task_ref / task_name."""
    extra = extra_info or {}
    return task_from_fields(extra.get("task_source") or ground_truth, extra.get("task_ref"), extra.get("task_name"))


def compute_score(data_source: str, solution_str: str, ground_truth: str, extra_info: Optional[Dict[str, Any]] = None,
                  format: str = "native", service_url: Optional[str] = None, token_file: Optional[str] = None,
                  options: Optional[Dict[str, Any]] = None, **kwargs: Any) -> float:
    """The kernel score of one solution (0 unless correct; w_correct + speedup when correct).
    Thread-safe; blocks until the evaluation is done (the service's retry window at most)."""
    evaluator, protocol = shared_evaluator_and_protocol(format, service_url, token_file, options)
    env = KernelEnv(evaluator, EnvConfig(format=format, n_turns=1), protocol)
    env.reset(task_of_row(ground_truth, extra_info))
    _, score, _, _ = env.step(solution_str)
    return score


def kernel_rows(tasks: Sequence[Task], format: str = "native", agent_name: Optional[str] = None,
                protocol: Optional[EnvProtocol] = None, env_config: Optional[EnvConfig] = None) -> List[Dict[str, Any]]:
    """verl dataset rows (write them to parquet for data.train_files): "prompt" (turn 1's messages,
    as `kernelrl rollout` builds them), data_source, reward_model.ground_truth (the task's text),
    extra_info (task_ref, task_name) and, for multi-turn, agent_name (the name the agent loop
    config gives KernelAgentLoop)."""
    config = env_config or EnvConfig(format=format)
    own = protocol is None
    protocol = protocol or EnvProtocol()
    try:
        rows = []
        for i, task in enumerate(tasks):
            prompt = protocol.prompt(config.format, task.source, 1, [], **config.prompt_options())["messages"]
            fields = task_row(task)
            extra = {"index": i, "task_name": fields["task_name"]}
            if "task_ref" in fields:
                extra["task_ref"] = fields["task_ref"]
            row: Dict[str, Any] = {"data_source": DATA_SOURCE, "prompt": prompt,
                                   "reward_model": {"style": "rule", "ground_truth": task.source}, "extra_info": extra}
            if agent_name:
                row["agent_name"] = agent_name
            rows.append(row)
        return rows
    finally:
        if own:
            protocol.close()
