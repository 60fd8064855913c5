"""The verifiers adapter against a live local service with host tasks: KernelMultiTurnEnv driven
through the documented rollout loop (setup_state, a model answer, env_response with the history,
until max_turns answers) and its rubric scoring the rollout: the reward is the recipe's return of
turn 1 (scores 0, 0.3: 0 + 0.4 * 0.3), with best and last score as zero-weight metrics."""

from __future__ import annotations

import asyncio
import unittest

from adapter_testing import framework
from kernelrl_testing import CHEAP_OPTIONS, SCRIPTED_RESPONSES, TASK_ADD, TASK_ADD_REF, LiveServiceTest

FRAMEWORK = framework("verifiers")

from kernelrl_client import Task, returns  # noqa: E402
from kernelrl_client.adapters.verifiers import KernelMultiTurnEnv, kernel_dataset  # noqa: E402


class VerifiersAdapter(LiveServiceTest):
    @unittest.skipIf(FRAMEWORK == "installed", "the installed verifiers runs rollouts through a model client; "
                                               "this drives the recorded loop")
    def test_rollout_and_rubric(self) -> None:
        task = Task(source=TASK_ADD.read_text(), ref=TASK_ADD_REF)
        rows = kernel_dataset([task], format="host", protocol=self.protocol)
        self.assertEqual(rows[0]["prompt"], self.protocol.prompt("host", task.source, 1)["messages"])
        env = KernelMultiTurnEnv(dataset=rows, format="host", n_turns=2, service_url=self.service.url,
                                 options=CHEAP_OPTIONS, protocol=self.protocol)
        self.assertEqual(env.max_turns, 2)
        answers = iter(SCRIPTED_RESPONSES[1:])  # crashing, then correct

        async def run():
            state = await env.rollout(rows[0], lambda messages: next(answers))
            scored = await env.rubric.score_rollout(rows[0]["prompt"], state["completion"], "", state, rows[0]["info"])
            return state, scored

        state, scored = asyncio.run(run())
        completion = state["completion"]
        self.assertEqual([m["role"] for m in completion], ["assistant", "user", "assistant"])
        self.assertIn("runtime error: ", completion[1]["content"])  # the feedback line inside turn 2's prompt
        self.assertEqual(state["kernelrl_env"].scores, [0.0, 0.3])
        self.assertEqual(scored["reward"], returns([0.0, 0.3])[0])
        self.assertEqual(scored["metrics"], {"kernel_return": 0.4 * 0.3, "best_score": 0.3, "last_score": 0.3})


if __name__ == "__main__":
    unittest.main()
