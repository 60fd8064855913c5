"""The TRL adapter called as GRPOTrainer calls it (read in TRL 1.16's source), against a live
local service with host tasks, without TRL installed (tests/python/release/check_trl.py runs it in
the real GRPOTrainer):
- KernelReward as a reward function (GRPOTrainer._calculate_rewards: reward_func(prompts=,
  completions=, completion_ids=, **dataset_columns, trainer_state=, log_extra=, log_metric=); TRL
  0.20 passes the same minus the two loggers): one float per completion, the kernel score of each;
  the prompt column is `kernelrl rollout`'s turn-1 prompt.
- KernelRollout as the rollout_func (GRPOTrainer._generate: rollout_func(prompts, trainer), the
  prompts already repeated num_generations times; it reads trainer.processing_class and
  trainer.args.max_completion_length), with a scripted generator and a character tokenizer with a
  ChatML template: the token sequence is the chat of the whole trajectory, the environment's
  tokens masked; the returned fields reach kernel_return_reward as the trainer passes them."""

from __future__ import annotations

import pickle
import types
import unittest
from typing import Any, Dict, List

from kernelrl_testing import CHEAP_OPTIONS, SCRIPTED_RESPONSES, TASK_ADD, TASK_ADD_REF, LiveServiceTest

from kernelrl_client import EnvProtocol, Task
from kernelrl_client.adapters.trl import KernelReward, KernelRollout, kernel_dataset, kernel_return_reward

IM_START, IM_END, PAD = 1, 2, 0  # the character tokenizer's special tokens; a character c is ord(c) + 16


class ChatTokenizer:
    """A character tokenizer with a ChatML template (what SmolLM2 and Qwen use), as much of a
    transformers tokenizer as KernelRollout calls."""

    eos_token_id = IM_END
    pad_token_id = PAD

    def encode(self, text: str) -> List[int]:
        return [ord(c) + 16 for c in text]

    def decode(self, ids: List[int], skip_special_tokens: bool = False) -> str:
        special = {IM_START: "<|im_start|>", IM_END: "<|im_end|>", PAD: "<pad>"}
        return "".join(("" if skip_special_tokens else special[i]) if i in special else chr(i - 16) for i in ids)

    def apply_chat_template(self, messages: List[Dict[str, str]], tokenize: bool = True,
                            add_generation_prompt: bool = False, return_dict: bool = True) -> Any:
        ids: List[int] = []
        for m in messages:
            ids += [IM_START] + self.encode(f"{m['role']}\n{m['content']}") + [IM_END] + self.encode("\n")
        if add_generation_prompt:
            ids += [IM_START] + self.encode("assistant\n")
        return {"input_ids": ids} if return_dict else ids


class ScriptedGenerate:
    """generate= for KernelRollout: rollout i answers scripts[i][turn - 1]; records each context."""

    def __init__(self, scripts: List[List[str]], tokenizer: ChatTokenizer, stop: bool = True) -> None:
        self.scripts, self.tokenizer, self.stop = scripts, tokenizer, stop
        self.contexts: List[List[List[int]]] = []  # per call (turn), the contexts of the active rollouts

    def __call__(self, trainer: Any, contexts: List[List[int]], max_new_tokens: int) -> List[List[int]]:
        turn = len(self.contexts)
        self.contexts.append(contexts)
        answers = [self.tokenizer.encode(script[turn]) for script in self.scripts]
        return [a[:max_new_tokens] + ([IM_END] if self.stop else []) for a in answers]


def fake_trainer(tokenizer: ChatTokenizer, train_dataset: Any = None, max_completion_length: int = 100000) -> Any:
    return types.SimpleNamespace(processing_class=tokenizer, train_dataset=train_dataset,
                                 args=types.SimpleNamespace(max_completion_length=max_completion_length))


class TrlReward(LiveServiceTest):
    def test_reward_funcs_call(self) -> None:
        task = Task(source=TASK_ADD.read_text(), name="task_add.py", ref=TASK_ADD_REF)
        rows = kernel_dataset([task], format="host", protocol=self.protocol)
        self.assertEqual(rows[0]["prompt"], self.protocol.prompt("host", task.source, 1)["messages"])
        reward = KernelReward(format="host", service_url=self.service.url, options=CHEAP_OPTIONS, protocol=self.protocol)
        self.assertEqual(reward.__name__, "kernel_score")

        # num_generations = 3 completions of the one prompt, conversational format.
        inputs = [dict(rows[0], completion=[{"role": "assistant", "content": r}]) for r in SCRIPTED_RESPONSES]
        prompts = [x["prompt"] for x in inputs]
        completions = [x["completion"] for x in inputs]
        keys = [k for k in inputs[0] if k not in ("prompt", "completion", "completion_ids")]
        reward_kwargs = {k: [x[k] for x in inputs] for k in keys}
        reward_kwargs["trainer_state"] = None
        reward_kwargs["log_extra"] = lambda column, values: None
        reward_kwargs["log_metric"] = lambda name, value: None
        rewards = reward(prompts=prompts, completions=completions, completion_ids=[[1, 2, 3]] * 3, **reward_kwargs)
        self.assertEqual(rewards, [0.0, 0.0, 0.3])
        self.assertTrue(all(isinstance(r, float) for r in rewards))
        self.assertEqual([i["correct"] for i in reward.last_infos], [False, False, True])

        # Standard (text) completions and a task sent by source instead of by task-set path.
        rewards = reward(prompts=["p"] * 2, completions=SCRIPTED_RESPONSES[1:], task_source=[task.source] * 2)
        self.assertEqual(rewards, [0.0, 0.3])

    def test_the_reward_pickles(self) -> None:
        # Trainers send reward functions to their worker processes by pickling them (TRL's
        # AsyncGRPOTrainer); the copy scores as the original does, with a `kernelrl env` of its own.
        reward = KernelReward(format="host", service_url=self.service.url, options=CHEAP_OPTIONS)
        copy = pickle.loads(pickle.dumps(reward))
        try:
            self.assertIsNot(copy.protocol, reward.protocol)
            rewards = copy(prompts=["p"] * 2, completions=SCRIPTED_RESPONSES[1:], task_source=[TASK_ADD.read_text()] * 2,
                           task_ref=[TASK_ADD_REF] * 2)
            self.assertEqual(rewards, [0.0, 0.3])
        finally:
            copy.protocol.close()
            reward.protocol.close()

    def test_a_dataset_without_tasks_is_refused(self) -> None:
        reward = KernelReward(format="host", service_url=self.service.url, protocol=self.protocol)
        with self.assertRaisesRegex(ValueError, "task_source column"):
            reward(prompts=["p"], completions=["c"])


class TrlRollout(LiveServiceTest):
    def setUp(self) -> None:
        super().setUp()
        self.task = Task(source=TASK_ADD.read_text(), name="task_add.py", ref=TASK_ADD_REF)
        self.tokenizer = ChatTokenizer()

    def rollout(self, **kwargs: Any) -> KernelRollout:
        return KernelRollout(format="host", service_url=self.service.url, options=CHEAP_OPTIONS,
                             protocol=self.protocol, **kwargs)

    def test_rollout_func_call(self) -> None:
        # Two rollouts of one task (num_generations = 2): unparsable, crash, correct; crash, correct, correct.
        rows = kernel_dataset([self.task], format="host", protocol=self.protocol) * 2
        scripts = [SCRIPTED_RESPONSES, [SCRIPTED_RESPONSES[1], SCRIPTED_RESPONSES[2], SCRIPTED_RESPONSES[2]]]
        generate = ScriptedGenerate(scripts, self.tokenizer)
        rollout = self.rollout(n_turns=3, generate=generate)
        prompts = [row["prompt"] for row in rows]
        output = rollout(prompts, fake_trainer(self.tokenizer, rows))

        self.assertEqual(output["logprobs"], None)
        self.assertEqual(output["kernel_scores"], [[0.0, 0.0, 0.3], [0.0, 0.3, 0.3]])
        self.assertEqual(output["kernel_correct"], [[False, False, True], [False, True, True]])
        self.assertAlmostEqual(output["kernel_return"][0], 0.4 * 0.4 * 0.3)  # gamma 0.4
        self.assertAlmostEqual(output["kernel_return"][1], 0.4 * (0.3 + 0.4 * 0.3))
        self.assertEqual(len(generate.contexts), 3)
        for i, env in enumerate(rollout.last_envs):
            # The whole sequence is the chat of the trajectory: turn 1's prompt, then each answer
            # and the next turn's user prompt (the rollout's, with the earlier attempts).
            chat = list(prompts[i])
            for turn, answer in enumerate(scripts[i], start=1):
                chat.append({"role": "assistant", "content": answer})
                if turn < 3:
                    next_prompt = self.protocol.prompt("host", self.task.source, turn + 1, env.attempts[:turn])
                    chat.append({"role": "user", "content": next_prompt["messages"][-1]["content"]})
            rendered = self.tokenizer.apply_chat_template(chat, add_generation_prompt=False, return_dict=False)
            sequence = output["prompt_ids"][i] + output["completion_ids"][i]
            self.assertEqual(sequence, rendered[:-1])  # all but the newline the template puts after the last turn
            for turn in range(3):
                self.assertEqual(generate.contexts[turn][i], sequence[:len(generate.contexts[turn][i])])
            # The mask keeps exactly the model's answers (with their stop tokens).
            mask = output["env_mask"][i]
            self.assertEqual(len(mask), len(output["completion_ids"][i]))
            kept = [t for t, m in zip(output["completion_ids"][i], mask) if m]
            self.assertEqual(kept, sum((self.tokenizer.encode(a) + [IM_END] for a in scripts[i]), []))

        # The trainer merges the extra fields into its inputs and passes them to the reward functions.
        metrics: Dict[str, float] = {}
        extra = {k: v for k, v in output.items() if k not in ("prompt_ids", "completion_ids", "logprobs", "env_mask")}
        rewards = kernel_return_reward(prompts=prompts, completions=[[{"role": "assistant", "content": "x"}]] * 2,
                                       completion_ids=output["completion_ids"], trainer_state=None,
                                       log_extra=lambda column, values: None, log_metric=metrics.__setitem__,
                                       **_columns(rows), **extra)
        self.assertEqual(rewards, output["kernel_return"])
        self.assertAlmostEqual(metrics["kernel/best_score"], 0.3)

    def test_an_answer_cut_at_the_token_limit(self) -> None:
        # No stop token at the end of a cut answer: the rollout closes the turn with one, masked.
        generate = ScriptedGenerate([[SCRIPTED_RESPONSES[2], SCRIPTED_RESPONSES[2]]], self.tokenizer, stop=False)
        rollout = self.rollout(n_turns=2, generate=generate, max_turn_tokens=20, tasks=[self.task])
        prompt = kernel_dataset([self.task], format="host", protocol=self.protocol)[0]["prompt"]
        output = rollout([prompt], fake_trainer(self.tokenizer))
        ids, mask = output["completion_ids"][0], output["env_mask"][0]
        self.assertEqual(ids[:21], self.tokenizer.encode(SCRIPTED_RESPONSES[2])[:20] + [IM_END])
        self.assertEqual(mask[:21], [1] * 20 + [0])
        self.assertEqual(sum(mask), 40)
        self.assertEqual(output["kernel_scores"], [[0.0, 0.0]])  # the block is cut off: a format error


class TrlRolloutRefusals(unittest.TestCase):
    def test_a_prompt_without_a_task_is_refused(self) -> None:
        with EnvProtocol() as protocol:
            rollout = KernelRollout(format="host", protocol=protocol, evaluator=object())  # never evaluates
            with self.assertRaisesRegex(ValueError, "matches no task"):
                rollout([[{"role": "user", "content": "write a kernel"}]], fake_trainer(ChatTokenizer(), []))
        with self.assertRaisesRegex(ValueError, "rollout_func=KernelRollout"):
            kernel_return_reward(completions=["c"])


def _columns(rows: List[Dict[str, Any]]) -> Dict[str, List[Any]]:
    """The dataset columns but the prompt, as the trainer passes them to reward functions."""
    return {k: [row[k] for row in rows] for k in rows[0] if k != "prompt"}


if __name__ == "__main__":
    unittest.main()
