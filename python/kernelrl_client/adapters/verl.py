"""verl: the kernel score as a custom reward function (single turn) and an interaction for verl's
multi-turn rollout (verl >= 0.5: verl.interactions.base.BaseInteraction with async
start_interaction / generate_response / calculate_score / finalize_interaction).

Reward: custom_reward_function.path = this file, name = compute_score (or compute_score_batch
with the batch reward manager); reward_kwargs (service_url, token_file, format, options) are
passed through. ground_truth is the task file's text; extra_info may carry task_ref.

Interaction: interaction YAML `class_name: kernelrl_client.adapters.verl.KernelInteraction` with
config {format, n_turns, service_url, token_file, options}; each row's
extra_info.interaction_kwargs carries task_source (and task_ref). Every model answer is one turn
of a KernelEnv: the interaction's reply is the next turn's prompt (earlier attempts with their
feedback lines, the instruction to restart), its score the turn's kernel score, and the sequence
ends after n_turns.
"""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Optional, Tuple
from uuid import uuid4

from verl.interactions.base import BaseInteraction

from ..env import EnvConfig, KernelEnv
from ..evaluators import Evaluator
from ..protocol import EnvProtocol
from .common import completion_text, make_evaluator, task_from_fields

_shared: Dict[Tuple[Any, ...], Tuple[Evaluator, EnvProtocol]] = {}


def _evaluator_and_protocol(format: str, service_url: Optional[str], token_file: Optional[str],
                            options: Optional[Dict[str, Any]]) -> Tuple[Evaluator, EnvProtocol]:
    key = (format, service_url, token_file, repr(sorted((options or {}).items())))
    if key not in _shared:  # one `kernelrl env` process and one client per reward worker
        _shared[key] = (make_evaluator(format, service_url, token_file, options), EnvProtocol())
    return _shared[key]


def compute_score_batch(data_sources: List[str], solution_strs: List[str], ground_truths: List[str],
                        extra_infos: List[Optional[Dict[str, Any]]], format: str = "native",
                        service_url: Optional[str] = None, token_file: Optional[str] = None,
                        options: Optional[Dict[str, Any]] = None, **kwargs: Any) -> List[float]:
    """The kernel score of each solution on its task (one evaluation batch)."""
    evaluator, protocol = _evaluator_and_protocol(format, service_url, token_file, options)
    envs = []
    for truth, extra in zip(ground_truths, extra_infos):
        env = KernelEnv(evaluator, EnvConfig(format=format, n_turns=1), protocol)
        env.reset(task_from_fields(truth, (extra or {}).get("task_ref"), (extra or {}).get("task_name")))
        envs.append(env)
    return [score for _, score, _, _ in KernelEnv.step_many(envs, list(solution_strs))]


def compute_score(data_source: str, solution_str: str, ground_truth: str, extra_info: Optional[Dict[str, Any]] = None,
                  **kwargs: Any) -> float:
    """verl's custom reward function: the kernel score of one solution (0 unless correct;
    w_correct + speedup when correct)."""
    return compute_score_batch([data_source], [solution_str], [ground_truth], [extra_info], **kwargs)[0]


class KernelInteraction(BaseInteraction):
    """One KernelEnv per interaction instance (trajectory)."""

    def __init__(self, config: Dict[str, Any]):
        super().__init__(config)
        self.env_config = EnvConfig(format=config.get("format", "native"), n_turns=int(config.get("n_turns", 4)),
                                    gpu=config.get("gpu"), max_chars=config.get("max_chars"))
        self.evaluator, self.protocol = _evaluator_and_protocol(self.env_config.format, config.get("service_url"),
                                                                config.get("token_file"), config.get("options"))
        self._envs: Dict[str, KernelEnv] = {}

    async def start_interaction(self, instance_id: Optional[str] = None, task_source: Optional[str] = None,
                                task_ref: Optional[str] = None, task_name: Optional[str] = None, **kwargs: Any) -> str:
        instance_id = instance_id or str(uuid4())
        env = KernelEnv(self.evaluator, self.env_config, self.protocol)
        env.reset(task_from_fields(task_source, task_ref, task_name))
        self._envs[instance_id] = env
        return instance_id

    async def generate_response(self, instance_id: str, messages: List[Dict[str, Any]],
                                **kwargs: Any) -> Tuple[bool, str, float, Dict[str, Any]]:
        env = self._envs[instance_id]
        feedback, score, done, info = await asyncio.to_thread(env.step, completion_text(messages))
        info = {k: v for k, v in info.items() if k not in ("result", "next_messages")}
        return done, feedback["content"], score, info

    async def calculate_score(self, instance_id: str, **kwargs: Any) -> float:
        """The latest turn's score (0 before the first)."""
        env = self._envs[instance_id]
        return env.scores[-1] if env.scores else 0.0

    async def finalize_interaction(self, instance_id: str, **kwargs: Any) -> None:
        self._envs.pop(instance_id, None)
