"""The verl adapter against a live local service with host tasks: compute_score called as verl's
reward manager calls a custom reward function (data_source, solution_str, ground_truth,
extra_info, **reward_kwargs), the batch variant, and KernelInteraction driven as verl's multi-turn
rollout drives an interaction (start_interaction with the row's interaction_kwargs, then
generate_response after each model answer until it says to terminate, calculate_score,
finalize_interaction)."""

from __future__ import annotations

import asyncio
import unittest

from adapter_testing import framework
from kernelrl_testing import CHEAP_OPTIONS, SCRIPTED_RESPONSES, TASK_ADD, TASK_ADD_REF, LocalService

FRAMEWORK = framework("verl.interactions.base")

from kernelrl_client import EnvConfig, EnvProtocol, KernelEnv, ServiceClient, ServiceEvaluator, Task  # noqa: E402
from kernelrl_client.adapters.verl import KernelInteraction, compute_score, compute_score_batch  # noqa: E402


class VerlAdapter(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.service = LocalService()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.service.stop()

    def reward_kwargs(self) -> dict:
        return {"format": "host", "service_url": self.service.url, "options": CHEAP_OPTIONS}

    def test_compute_score(self) -> None:
        source = TASK_ADD.read_text()
        scores = [compute_score("kernelrl/host", r, source, {"task_ref": TASK_ADD_REF}, **self.reward_kwargs())
                  for r in SCRIPTED_RESPONSES]
        self.assertEqual(scores, [0.0, 0.0, 0.3])
        batch = compute_score_batch(["kernelrl/host"] * 3, SCRIPTED_RESPONSES, [source] * 3, [None] * 3,
                                    **self.reward_kwargs())
        self.assertEqual(batch, scores)

    def test_interaction(self) -> None:
        config = {"name": "kernel", "n_turns": 3, **self.reward_kwargs()}
        interaction = KernelInteraction(config)
        self.assertEqual(interaction.name, "kernel")
        task = Task(source=TASK_ADD.read_text(), ref=TASK_ADD_REF)

        async def rollout():
            instance = await interaction.start_interaction(None, task_source=task.source, task_ref=task.ref, name="kernel")
            messages = [{"role": "user", "content": "turn 1 prompt"}]
            replies = []
            for response in SCRIPTED_RESPONSES:
                messages.append({"role": "assistant", "content": response})
                done, content, score, info = await interaction.generate_response(instance, messages)
                replies.append((done, content, score))
                messages.append({"role": "user", "content": content})
                if done:
                    break
            final = await interaction.calculate_score(instance)
            await interaction.finalize_interaction(instance)
            return replies, final

        replies, final = asyncio.run(rollout())
        self.assertEqual([(d, s) for d, _, s in replies], [(False, 0.0), (False, 0.0), (True, 0.3)])
        self.assertEqual(final, 0.3)
        # The interaction's replies are the env's next prompts (the rollout's, byte for byte).
        with EnvProtocol() as protocol:
            env = KernelEnv(ServiceEvaluator(ServiceClient(self.service.url), "host", CHEAP_OPTIONS),
                            EnvConfig(format="host", n_turns=3), protocol)
            env.reset(task)
            expected = [env.step(r)[0]["content"] for r in SCRIPTED_RESPONSES]
        self.assertEqual([c for _, c, _ in replies], expected)
        self.assertIn("failed to parse: no ```cpp code block found", replies[0][1])


if __name__ == "__main__":
    unittest.main()
