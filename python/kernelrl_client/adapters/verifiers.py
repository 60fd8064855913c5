"""verifiers (prime-rl): kernel tasks as a `vf.MultiTurnEnv` with a rubric on the kernel score
(verifiers 0.1.x: env_response(messages, state, **kwargs) returns the environment's messages;
reward functions are called with the rollout's fields by name: prompt, completion, state, info).

Dataset rows: "prompt" (turn 1's messages, kernel_dataset()) and "info" with task_source (and
task_ref). Each model answer is one KernelEnv turn; the environment's reply is the next turn's
prompt. The rubric's reward is the recipe's return of turn 1 (discounted sum of the turn scores,
gamma 0.4), with the best and the last turn score as metrics (weight 0).
"""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Optional

import verifiers as vf

from ..credit import CreditConfig
from ..env import EnvConfig, KernelEnv
from ..evaluators import Evaluator, Task
from ..protocol import EnvProtocol
from .common import completion_text, make_evaluator, task_from_fields, task_row

STATE_KEY = "kernelrl_env"
LOCK_KEY = "kernelrl_lock"


def _assistant_turns(completion: Any) -> List[str]:
    if isinstance(completion, str):
        return [completion]
    return [str(m.get("content") or "") for m in completion or [] if isinstance(m, dict) and m.get("role") == "assistant"]


async def _catch_up(state: Dict[str, Any], completion: Any) -> KernelEnv:
    """The rollout's env after stepping the answers it has not seen yet (the loop may stop after
    the last model answer without asking the environment for a reply). The rubric's functions may
    run concurrently: one lock per rollout."""
    env: KernelEnv = state[STATE_KEY]
    async with state.setdefault(LOCK_KEY, asyncio.Lock()):
        answers = _assistant_turns(completion)
        while not env.done and env.turn - 1 < len(answers):
            await asyncio.to_thread(env.step, answers[env.turn - 1])
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


class KernelMultiTurnEnv(vf.MultiTurnEnv):
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

    async def env_response(self, messages: Any, state: Dict[str, Any], **kwargs: Any) -> List[Dict[str, str]]:
        env: KernelEnv = state[STATE_KEY]
        async with state.setdefault(LOCK_KEY, asyncio.Lock()):
            if env.done:  # a loop that asks once more after the last turn
                return []
            feedback, _, _, _ = await asyncio.to_thread(env.step, completion_text(messages))
        return [feedback]


def kernel_dataset(tasks: List[Task], format: str = "native", protocol: Optional[EnvProtocol] = None) -> List[Dict[str, Any]]:
    """Rows {"prompt", "info"} for KernelMultiTurnEnv; datasets.Dataset.from_list(rows)."""
    protocol = protocol or EnvProtocol()
    return [{"prompt": protocol.prompt(format, t.source, 1, [])["messages"], "info": task_row(t)} for t in tasks]
