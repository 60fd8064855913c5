"""verl: the kernel environment as a verl agent loop (multi-turn), and the kernel score as a custom
reward function (single turn; verl_reward.compute_score, re-exported here).

verl 0.8 removed interactions (verl.interactions); a multi-turn environment is an agent loop,
verl.experimental.agent_loop.AgentLoopBase, named in an agent loop config file and chosen per row
by its agent_name:

    # kernel_agent.yaml (actor_rollout_ref.rollout.agent.agent_loop_config_path=kernel_agent.yaml)
    - name: kernel_agent
      _target_: kernelrl_client.adapters.verl.KernelAgentLoop
      format: kernelbench
      n_turns: 4                 # default: actor_rollout_ref.rollout.multi_turn.max_assistant_turns, else 4
      options: {n_trials: 5}

Rows: verl_reward.kernel_rows(tasks, format, agent_name="kernel_agent"). Each model answer is one
turn of a KernelEnv, scored as `kernelrl rollout` scores it; while turns are left (and the response
budget holds), the environment's next prompt (the task, earlier attempts with their feedback, the
instruction to restart) follows as a user message and the model answers again. Every answer is
scored (extra_fields.turn_scores); the trajectory's reward_score is the recipe's return of turn 1
(the discounted sum of the turn scores), so verl's reward workers are not asked. The environment
lives only inside run(): it is gone when the trajectory ends, however it ends.
"""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Optional, Tuple
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput
from verl.utils.profiler import simple_timer

from kernelrl_client.adapters.verl_reward import (compute_score, kernel_rows, shared_evaluator_and_protocol,  # noqa: F401
                                                  task_of_row)
from kernelrl_client.credit import CreditConfig, returns
from kernelrl_client.env import EnvConfig, KernelEnv


class KernelAgentLoop(AgentLoopBase):
    """One kernel trajectory per run(). verl makes one instance per trajectory; the evaluator and
    the `kernelrl env` process are shared by all of them in the worker process."""

    def __init__(self, *args: Any, format: str = "native", n_turns: Optional[int] = None, service_url: Optional[str] = None,
                 token_file: Optional[str] = None, options: Optional[Dict[str, Any]] = None, gpu: Optional[str] = None,
                 max_chars: Optional[int] = None, gamma: float = 0.4, **kwargs: Any):
        super().__init__(*args, **kwargs)
        # Answers per trajectory: n_turns, else the rollout's multi_turn.max_assistant_turns, else the recipe's 4.
        n_turns = n_turns or self.rollout_config.multi_turn.get("max_assistant_turns") or 4
        self.env_config = EnvConfig(format=format, n_turns=int(n_turns), gpu=gpu,
                                    max_chars=int(max_chars) if max_chars is not None else None)
        self.evaluator, self.protocol = shared_evaluator_and_protocol(format, service_url, token_file, options)
        self.credit = CreditConfig(gamma=float(gamma))
        self.response_length = int(self.rollout_config.response_length)

    async def run(self, sampling_params: Dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        """The trajectory of one row (kwargs: the row's fields: raw_prompt, reward_model, extra_info).
        An evaluation that cannot be had (the service unreachable past its retry window) raises, as
        verl's own loops do when their environment fails."""
        reward_model = kwargs.get("reward_model") or {}
        task = task_of_row(reward_model.get("ground_truth"), kwargs.get("extra_info"))
        env = KernelEnv(self.evaluator, self.env_config, self.protocol)
        await asyncio.to_thread(env.reset, task)
        messages: List[Dict[str, Any]] = list(kwargs["raw_prompt"])
        request_id = uuid4().hex  # one per trajectory: every turn goes to the same server (prefix cache)
        metrics: Dict[str, Any] = {}
        tokens = await self._first_tokens(messages)
        response_mask: List[int] = []
        logprobs: Optional[List[float]] = None
        n_feedback = 0
        while True:
            with simple_timer("generate_sequences", metrics):
                output = await self.server_manager.generate(request_id=request_id, prompt_ids=tokens,
                                                            sampling_params=sampling_params)
            if output.log_probs and logprobs is None:
                logprobs = [0.0] * len(response_mask)
            tokens, response_mask, logprobs = await self._add_answer(tokens, list(output.token_ids), response_mask,
                                                                     logprobs, output.log_probs or None)
            answer = await self.loop.run_in_executor(
                None, lambda: self.tokenizer.decode(output.token_ids, skip_special_tokens=True))
            with simple_timer("tool_calls", metrics):  # the evaluation, where verl's metrics put environment time
                feedback, _, done, _ = await asyncio.to_thread(env.step, answer)
            if done or len(response_mask) >= self.response_length:
                break
            messages.append({"role": "assistant", "content": answer})
            previous = list(messages)
            messages.append(feedback)
            next_tokens, next_mask, next_logprobs = await self._add_feedback(previous, messages, tokens,
                                                                             response_mask, logprobs)
            if len(next_mask) >= self.response_length:  # no room left to answer the feedback
                break
            tokens, response_mask, logprobs = next_tokens, next_mask, next_logprobs
            n_feedback += 1
        scores = list(env.scores)
        n_response = len(response_mask)
        return AgentLoopOutput(
            prompt_ids=tokens[:len(tokens) - n_response],
            response_ids=tokens[len(tokens) - n_response:][:self.response_length],
            response_mask=response_mask[:self.response_length],
            response_logprobs=logprobs[:self.response_length] if logprobs else None,
            reward_score=returns(scores, self.credit)[0],
            num_turns=len(scores) + n_feedback + 1,
            metrics=metrics,
            extra_fields={"turn_scores": scores, "tool_rewards": []},
        )

    # -- tokens, the way this verl release's own agent loops build them -------------------------
    # verl >= 0.9.1 renders every turn with its continuous-token builder (ct_* helpers); 0.9.0 does
    # when data.continuous_token.enable is set (ct_merge_non_assistant_msg); otherwise, as in 0.8,
    # the chat template renders the first prompt and each later message alone, without the system
    # prompt (after 0.9.0's turn separator, which the model's end-of-turn token leaves out).

    def _continuous_token(self) -> bool:
        return hasattr(self, "ct_merge_context_msg") or bool(getattr(self, "enable_continuous_token", False))

    async def _first_tokens(self, messages: List[Dict[str, Any]]) -> List[int]:
        if self._continuous_token():
            return list(await self.ct_build_initial_tokens(messages))
        return list(await self.apply_chat_template(messages))

    async def _add_answer(self, tokens: List[int], answer: List[int], mask: List[int], logprobs: Optional[List[float]],
                          answer_logprobs: Optional[List[float]]) -> Tuple[List[int], List[int], Optional[List[float]]]:
        """The sequence with the model's answer appended (mask 1)."""
        if self._continuous_token():
            merged, mask, logprobs = await self.ct_merge_assistant_token(tokens, answer, mask, logprobs,
                                                                         assistant_logprobs=answer_logprobs)
            return list(merged.token_ids), list(mask), logprobs
        if logprobs is not None:
            logprobs = logprobs + list(answer_logprobs or [0.0] * len(answer))
        return tokens + answer, mask + [1] * len(answer), logprobs

    async def _add_feedback(self, previous: List[Dict[str, Any]], messages: List[Dict[str, Any]], tokens: List[int],
                            mask: List[int], logprobs: Optional[List[float]]) -> Tuple[List[int], List[int], Optional[List[float]]]:
        """The sequence with the messages after `previous` appended (mask 0)."""
        if hasattr(self, "ct_merge_context_msg"):
            merged, mask, logprobs = await self.ct_merge_context_msg(previous, messages, tokens, mask, logprobs)
            return list(merged.token_ids), list(mask), logprobs
        if getattr(self, "enable_continuous_token", False):
            merged, mask, logprobs = await self.ct_merge_non_assistant_msg(previous, messages, tokens, mask, logprobs)
            return list(merged.token_ids), list(mask), logprobs
        appended = list(getattr(self, "turn_separator", None) or []) + list(
            await self.apply_chat_template(messages[len(previous):], remove_system_prompt=True))
        if logprobs is not None:
            logprobs = logprobs + [0.0] * len(appended)
        return tokens + appended, mask + [0] * len(appended), logprobs
