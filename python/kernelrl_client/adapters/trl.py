"""TRL: the kernel score as a `reward_funcs` entry of `trl.GRPOTrainer` (TRL >= 0.20: a reward
function is called as f(prompts=..., completions=..., completion_ids=..., trainer_state=...,
**dataset_columns) and returns one float per completion).

Each completion is turn 1 of a KernelEnv on its row's task (columns task_source, task_ref,
task_name: kernel_dataset() writes them); the whole batch is evaluated as one service batch.
GRPOTrainer's own group normalisation then gives the advantage over the G completions of a prompt.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Sequence

from ..env import EnvConfig, KernelEnv
from ..evaluators import Evaluator, Task
from ..protocol import EnvProtocol
from .common import completion_text, make_evaluator, task_from_fields, task_row


class KernelReward:
    """reward_funcs=[KernelReward(...)]; thread-safe for one caller at a time (the trainer's)."""

    __name__ = "kernel_score"  # TRL logs rewards/<__name__>

    def __init__(self, format: str = "native", service_url: Optional[str] = None, token_file: Optional[str] = None,
                 options: Optional[Dict[str, Any]] = None, env_config: Optional[EnvConfig] = None,
                 evaluator: Optional[Evaluator] = None, protocol: Optional[EnvProtocol] = None):
        self.config = dataclasses.replace(env_config or EnvConfig(format=format), n_turns=1)
        self.evaluator = evaluator or make_evaluator(self.config.format, service_url, token_file, options)
        self.protocol = protocol or EnvProtocol()
        self.last_infos: List[Dict[str, Any]] = []  # the step info of each completion of the last call

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], task_source: Optional[Sequence[str]] = None,
                 task_ref: Optional[Sequence[Optional[str]]] = None, task_name: Optional[Sequence[str]] = None,
                 **kwargs: Any) -> List[float]:
        if task_source is None:
            raise ValueError("KernelReward: the dataset needs a task_source column (kernel_dataset() writes it)")
        if len(task_source) != len(completions):
            raise ValueError(f"KernelReward: {len(completions)} completions but {len(task_source)} task_source values")
        envs = []
        for i in range(len(completions)):
            env = KernelEnv(self.evaluator, self.config, self.protocol)
            env.reset(task_from_fields(task_source[i], task_ref[i] if task_ref else None, task_name[i] if task_name else None))
            envs.append(env)
        steps = KernelEnv.step_many(envs, [completion_text(c) for c in completions])
        self.last_infos = [info for _, _, _, info in steps]
        return [score for _, score, _, _ in steps]


def kernel_dataset(tasks: Sequence[Task], format: str = "native", protocol: Optional[EnvProtocol] = None,
                   env_config: Optional[EnvConfig] = None) -> List[Dict[str, Any]]:
    """Rows for a conversational GRPO dataset: "prompt" (turn 1's messages, as `kernelrl rollout`
    builds them) and the task columns KernelReward reads. datasets.Dataset.from_list(rows)."""
    config = env_config or EnvConfig(format=format)
    protocol = protocol or EnvProtocol()
    rows = []
    for task in tasks:
        prompt = protocol.prompt(config.format, task.source, 1, [], **config.prompt_options())["messages"]
        rows.append({"prompt": prompt, **task_row(task)})
    return rows
