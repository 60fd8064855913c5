"""TRL: kernel tasks for `trl.GRPOTrainer`, single-turn as a reward function, multi-turn as a
rollout function. TRL is imported only inside the default generator, so this module imports
without it.

- KernelReward, a `reward_funcs` entry: called as f(prompts=, completions=, completion_ids=,
  trainer_state=, **dataset_columns) (TRL >= 0.20; 1.x adds log_extra= and log_metric=), one float
  per completion: the kernel score of turn 1 of a KernelEnv on the row's task (columns task_source,
  task_ref, task_name, which kernel_dataset() writes). The whole batch is one service batch.
  Pickles (AsyncGRPOTrainer sends reward functions to its workers that way).
- KernelRollout, the `rollout_func`: called as f(prompts, trainer) with the rows' prompts (already
  repeated num_generations times), it plays one multi-turn KernelEnv per prompt with the trainer's
  model and returns prompt_ids, completion_ids, logprobs (None: the trainer recomputes them),
  env_mask (0 on the environment's tokens, which the loss then ignores) and the kernel_* fields the
  trainer passes on to reward functions; kernel_return_reward is the matching `reward_funcs` entry.
  Each turn's context is the conversation so far: turn 1's prompt, then per turn the model's answer
  and the environment's reply as a user message (the next prompt of `kernelrl rollout`: the task,
  the earlier attempts with their feedback, the instruction to start again). The trajectory is one
  GRPO sequence, so every turn's tokens share one advantage: that of the recipe's turn-1 return.

Versions: KernelReward's call convention is the same from 0.20 to 1.16. KernelRollout needs
rollout_func(prompts, trainer) with untemplated prompts and env_mask, which TRL has from 0.29 (0.25
to 0.28 called it only with vLLM, with templated prompts, and 0.25 with other arguments). Run
against the real package: 1.16.0 (tests/python/release/check_trl.py); interface read in the source
of 0.29.1, 1.0.0, 1.5.0, 1.10.0, 1.14.2 and 1.15.0. rollout_func is experimental in TRL.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from ..credit import CreditConfig
from ..env import EnvConfig, KernelEnv
from ..evaluators import Evaluator, Task
from ..protocol import EnvProtocol, Message
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
    builds them) and the task columns KernelReward and KernelRollout read. datasets.Dataset.from_list(rows)."""
    config = env_config or EnvConfig(format=format)
    protocol = protocol or EnvProtocol()
    rows = []
    for task in tasks:
        prompt = protocol.prompt(config.format, task.source, 1, [], **config.prompt_options())["messages"]
        rows.append({"prompt": prompt, **task_row(task)})
    return rows


# generate(trainer, contexts, max_new_tokens): one answer's token ids per context (token ids of the
# conversation so far, ending with the generation prompt), each ending with a stop token unless cut
# at max_new_tokens.
Generate = Callable[[Any, List[List[int]], int], List[List[int]]]


class KernelRollout:
    """rollout_func=KernelRollout(...), reward_funcs=[kernel_return_reward]. One call at a time;
    the environments share one evaluator batch per turn."""

    def __init__(self, format: str = "native", n_turns: int = 4, service_url: Optional[str] = None,
                 token_file: Optional[str] = None, options: Optional[Dict[str, Any]] = None,
                 env_config: Optional[EnvConfig] = None, credit: CreditConfig = CreditConfig(),
                 max_turn_tokens: Optional[int] = None, generate: Optional[Generate] = None,
                 tasks: Sequence[Task] = (), evaluator: Optional[Evaluator] = None,
                 protocol: Optional[EnvProtocol] = None):
        self.config = env_config or EnvConfig(format=format, n_turns=n_turns)
        self.credit = credit
        self.max_turn_tokens = max_turn_tokens  # tokens per answer (default: the trainer's max_completion_length)
        self.generate = generate or generate_with_trainer_model
        self.evaluator = evaluator or make_evaluator(self.config.format, service_url, token_file, options)
        self.protocol = protocol or EnvProtocol()
        # The task of each turn-1 prompt: from `tasks`, else from the trainer's datasets at first sight.
        self._tasks: Dict[str, Task] = {}
        for task, row in zip(tasks, kernel_dataset(tasks, protocol=self.protocol, env_config=self.config)):
            self._tasks[_prompt_key(row["prompt"])] = task
        self.last_envs: List[KernelEnv] = []  # the trajectories of the last call

    def __call__(self, prompts: Sequence[Any], trainer: Any) -> Dict[str, Any]:
        tokenizer = _tokenizer(trainer)
        stop_ids = _stop_ids(trainer, tokenizer)
        max_new_tokens = self.max_turn_tokens or trainer.args.max_completion_length
        envs = [KernelEnv(self.evaluator, self.config, self.protocol) for _ in prompts]
        prompt_ids = [_chat_ids(tokenizer, env.reset(self._task_of(p, trainer)), True) for env, p in zip(envs, prompts)]
        completion_ids: List[List[int]] = [[] for _ in envs]
        env_mask: List[List[int]] = [[] for _ in envs]
        correct: List[List[bool]] = [[] for _ in envs]
        active = list(range(len(envs)))
        while active:
            answers = self.generate(trainer, [prompt_ids[i] + completion_ids[i] for i in active], max_new_tokens)
            texts = [tokenizer.decode(a, skip_special_tokens=True) for a in answers]
            steps = KernelEnv.step_many([envs[i] for i in active], texts)
            for i, answer, (reply, _, done, info) in zip(active, answers, steps):
                completion_ids[i] += answer
                env_mask[i] += [1] * len(answer)
                correct[i].append(bool(info["correct"]))
                if not done:
                    ended = bool(answer) and answer[-1] in stop_ids
                    between = _reply_ids(tokenizer, reply, stop_ids, answer_ended=ended)
                    completion_ids[i] += between
                    env_mask[i] += [0] * len(between)
            active = [i for i in active if not envs[i].done]
        self.last_envs = envs
        return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "logprobs": None, "env_mask": env_mask,
                "kernel_return": [env.returns(self.credit)[0] for env in envs],
                "kernel_scores": [list(env.scores) for env in envs], "kernel_correct": correct}

    def _task_of(self, prompt: Any, trainer: Any) -> Task:
        key = _prompt_key(prompt)
        if key not in self._tasks:
            for dataset in (getattr(trainer, "train_dataset", None), getattr(trainer, "eval_dataset", None)):
                for row in _task_rows(dataset):
                    self._tasks.setdefault(_prompt_key(row["prompt"]), task_from_fields(
                        row["task_source"], row.get("task_ref"), row.get("task_name")))
        if key not in self._tasks:
            raise ValueError("KernelRollout: a prompt matches no task: build the dataset with kernel_dataset() "
                             "(rows with task_source) or pass tasks= with the same format and prompt options")
        return self._tasks[key]


def kernel_return_reward(completions: Sequence[Any], kernel_return: Optional[Sequence[float]] = None,
                         kernel_scores: Optional[Sequence[Sequence[float]]] = None,
                         log_metric: Optional[Callable[[str, float], None]] = None, **kwargs: Any) -> List[float]:
    """reward_funcs entry for KernelRollout: each trajectory's turn-1 return, which the rollout
    passed as `kernel_return`; logs the best and the last turn score (TRL 1.x gives log_metric)."""
    if kernel_return is None:
        raise ValueError("kernel_return_reward: no kernel_return field: use it with rollout_func=KernelRollout(...)")
    if log_metric is not None and kernel_scores:
        log_metric("kernel/best_score", sum(max(s, default=0.0) for s in kernel_scores) / len(kernel_scores))
        log_metric("kernel/last_score", sum(s[-1] if s else 0.0 for s in kernel_scores) / len(kernel_scores))
    return [float(r) for r in kernel_return]


def generate_with_trainer_model(trainer: Any, contexts: List[List[int]], max_new_tokens: int) -> List[List[int]]:
    """The default Generate: the trainer's model, sampling as its own generation does (its
    generation_config), the contexts left-padded into one batch. Not for vLLM or DeepSpeed ZeRO-3
    generation: pass generate= for those."""
    import torch  # the trainer's own dependencies, imported only when a trainer calls
    from trl.models import unwrap_model_for_generation

    generation_config = getattr(trainer, "generation_config", None)
    if generation_config is None:
        raise ValueError("KernelRollout: this trainer has no generation_config (vLLM generation): pass generate=")
    tokenizer = _tokenizer(trainer)
    width = max(len(c) for c in contexts)
    input_ids = torch.tensor([[tokenizer.pad_token_id] * (width - len(c)) + c for c in contexts])
    attention_mask = torch.tensor([[0] * (width - len(c)) + [1] * len(c) for c in contexts])
    device = trainer.accelerator.device
    with unwrap_model_for_generation(trainer.model_wrapped, trainer.accelerator) as model, torch.no_grad():
        output = model.generate(input_ids=input_ids.to(device), attention_mask=attention_mask.to(device),
                                generation_config=generation_config, max_new_tokens=max_new_tokens)
    stop_ids = _stop_ids(trainer, tokenizer)
    answers = []
    for row in output[:, width:].tolist():
        end = next((k + 1 for k, token in enumerate(row) if token in stop_ids), len(row))
        answers.append(row[:end])
    return answers


# -- tokens -------------------------------------------------------------------------------------

def _tokenizer(trainer: Any) -> Any:
    processing_class = trainer.processing_class
    return getattr(processing_class, "tokenizer", processing_class)  # a multimodal processor wraps one


def _stop_ids(trainer: Any, tokenizer: Any) -> List[int]:
    """The tokens that end an answer: the trainer's generation stop tokens, else the tokenizer's EOS."""
    eos = getattr(getattr(trainer, "generation_config", None), "eos_token_id", None)
    if eos is None:
        eos = tokenizer.eos_token_id
    return list(eos) if isinstance(eos, (list, tuple)) else [eos]


def _chat_ids(tokenizer: Any, messages: List[Message], add_generation_prompt: bool) -> List[int]:
    ids = tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=add_generation_prompt,
                                        return_dict=False)
    return list(ids["input_ids"] if isinstance(ids, Mapping) else ids)


# Any finished exchange: the reply's tokens are what the template puts after an assistant turn.
_PROBE: List[Message] = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]


def _reply_ids(tokenizer: Any, reply: Message, stop_ids: Sequence[int], answer_ended: bool) -> List[int]:
    """The tokens between an answer and the next: the stop token where the answer was cut before
    it, what the template puts after it (ChatML: a newline), the reply message, the generation prompt."""
    before = _chat_ids(tokenizer, _PROBE, False)
    after = _chat_ids(tokenizer, _PROBE + [reply], True)
    end = max((k + 1 for k, token in enumerate(before) if token in stop_ids), default=0)  # just past the stop token
    closing = before[end - 1:end] if end and not answer_ended else []
    if not end:  # a template that ends an assistant turn with none of the trainer's stop tokens
        end = len(before)
    if after[:end] != before[:end]:
        raise ValueError("KernelRollout: the chat template renders a finished turn differently once a message "
                         "follows; a multi-turn rollout needs a template that only appends")
    return closing + after[end:]


def _prompt_key(prompt: Any) -> str:
    return prompt if isinstance(prompt, str) else json.dumps(
        [{"role": m["role"], "content": m["content"]} for m in prompt], sort_keys=True)


def _task_rows(dataset: Any) -> Sequence[Mapping[str, Any]]:
    """A map-style dataset's rows (datasets.Dataset or a list of dicts) if they carry tasks; else none."""
    if isinstance(dataset, list):
        return [row for row in dataset if isinstance(row, Mapping) and "task_source" in row]
    if hasattr(dataset, "__len__") and "task_source" in (getattr(dataset, "column_names", None) or []):
        return dataset
    return []
