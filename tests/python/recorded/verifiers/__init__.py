"""Recorded interface of verifiers 0.1.x as the kernel adapter uses it: MultiTurnEnv(dataset=...,
rubric=..., max_turns=...) with async setup_state(state) and env_response(messages, state,
**kwargs) -> messages, and Rubric(funcs=[...], weights=[...]) whose functions are called with the
rollout's fields by name. rollout() and score_rollout() drive them as the documented loop does:
set up the state, then model answer, stop after max_turns answers, else the environment's reply;
then every reward function, concurrently."""

import asyncio
from typing import Any, Callable, Dict, List, Optional

RECORDED = True


class Rubric:
    def __init__(self, funcs: Optional[List[Callable]] = None, weights: Optional[List[float]] = None, **kwargs: Any):
        self.funcs = list(funcs or [])
        self.weights = list(weights or [1.0] * len(self.funcs))

    async def score_rollout(self, prompt: Any, completion: Any, answer: Any, state: Dict[str, Any],
                            info: Any = None, **kwargs: Any) -> Dict[str, Any]:
        values = await asyncio.gather(*(f(prompt=prompt, completion=completion, answer=answer, state=state,
                                          info=info, task="default") for f in self.funcs))
        metrics = {f.__name__: v for f, v in zip(self.funcs, values)}
        return {"reward": sum(w * v for w, v in zip(self.weights, values)), "metrics": metrics}


class MultiTurnEnv:
    def __init__(self, dataset: Any = None, rubric: Optional[Rubric] = None, max_turns: int = -1, **kwargs: Any):
        self.dataset = dataset
        self.rubric = rubric
        self.max_turns = max_turns

    async def setup_state(self, state: Dict[str, Any], **kwargs: Any) -> Dict[str, Any]:
        return state

    async def env_response(self, messages: List[Dict[str, Any]], state: Dict[str, Any], **kwargs: Any) -> List[Dict[str, Any]]:
        raise NotImplementedError

    async def rollout(self, row: Dict[str, Any], model: Callable[[List[Dict[str, Any]]], str]) -> Dict[str, Any]:
        state: Dict[str, Any] = {"prompt": row["prompt"], "info": row.get("info", {}), "answer": row.get("answer", "")}
        state = await self.setup_state(state)
        messages = list(row["prompt"])
        n_answers = 0
        while True:
            messages.append({"role": "assistant", "content": model(messages)})
            n_answers += 1
            if self.max_turns > 0 and n_answers >= self.max_turns:
                break
            messages += await self.env_response(messages, state)
        state["completion"] = messages[len(row["prompt"]):]
        return state
