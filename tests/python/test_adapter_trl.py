"""The TRL adapter called as GRPOTrainer calls a reward function (recorded from TRL 1.16,
GRPOTrainer._calculate_rewards: reward_func(prompts=, completions=, completion_ids=,
**dataset_columns, trainer_state=, log_extra=, log_metric=); TRL 0.20 passes the same minus the
two loggers), against a live local service with host tasks: one float per
completion, the kernel score of each; the prompt column is `kernelrl rollout`'s turn-1 prompt."""

from __future__ import annotations

import pickle
import unittest

from kernelrl_testing import CHEAP_OPTIONS, SCRIPTED_RESPONSES, SOURCE_DIR, TASK_ADD, TASK_ADD_REF, LiveServiceTest

from kernelrl_client import Task
from kernelrl_client.adapters.trl import KernelReward, kernel_dataset


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


if __name__ == "__main__":
    unittest.main()
