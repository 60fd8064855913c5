"""KernelEnv reproduces `kernelrl rollout` on the same scripted responses (unparsable, crashing, correct): the prompts the chat
server received and the run's records are byte-identical to the env's messages, the scores are
equal, and the run's returns and advantages equal kernelrl_client.group_credit's. Both evaluate
through one live local service (host tasks on the CPU). The local evaluator (`kernelrl eval
--batch`, no service) gives the same feedback and scores."""

from __future__ import annotations

import json
import subprocess
import tempfile
import unittest
from pathlib import Path

from kernelrl_testing import (CHEAP_OPTIONS, KERNELRL, SCRIPTED_RESPONSES, SOURCE_DIR, TASK_ADD, LocalService,
                              ScriptedChatServer)

from kernelrl_client import (EnvConfig, EnvProtocol, KernelEnv, LocalEvaluator, ServiceClient, ServiceEvaluator,
                             Task, group_credit)

N_TURNS = len(SCRIPTED_RESPONSES)


class EnvMatchesRollout(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.service = LocalService()
        cls.protocol = EnvProtocol()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.protocol.close()
        cls.service.stop()

    def run_env(self, evaluator) -> tuple:
        env = KernelEnv(evaluator, EnvConfig(format="host", n_turns=N_TURNS), self.protocol)
        prompts = [env.reset(Task.from_file(str(TASK_ADD)))]
        steps = []
        for response in SCRIPTED_RESPONSES:
            steps.append(env.step(response))
            if not env.done:
                prompts.append(list(env.messages))
        return env, prompts, steps

    def test_prompts_scores_and_credit_equal_the_rollouts(self) -> None:
        chat = ScriptedChatServer(SCRIPTED_RESPONSES)
        try:
            with tempfile.TemporaryDirectory(prefix="kernelrl-py-rollout-") as tmp:
                out = Path(tmp) / "run"
                argv = [KERNELRL, "rollout", "--tasks", str(TASK_ADD.relative_to(SOURCE_DIR)), "--format", "host",
                        "--trajectories", "1", "--turns", str(N_TURNS), "--concurrency", "1",
                        "--base-url", chat.base_url, "--model", "scripted", "--out", str(out),
                        "--eval-service", self.service.url, "--device", "cpu", "--trials", "1", "--no-timing",
                        "--timeout-correctness-s", "5"]
                run = subprocess.run(argv, cwd=SOURCE_DIR, capture_output=True, text=True, timeout=600)
                self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
                records = [json.loads(l) for l in (out / "trajectories.jsonl").read_text().splitlines() if l.strip()]
        finally:
            chat.stop()
        turns = sorted((r for r in records if not r.get("update")), key=lambda r: r["turn"])
        updates = sorted((r for r in records if r.get("update")), key=lambda r: r["turn"])
        self.assertEqual(len(turns), N_TURNS)
        self.assertEqual(len(chat.requests), N_TURNS)

        env, prompts, steps = self.run_env(ServiceEvaluator(ServiceClient(self.service.url), "host", CHEAP_OPTIONS))
        for k in range(N_TURNS):
            with self.subTest(turn=k + 1):
                self.assertEqual(chat.requests[k]["messages"], prompts[k])  # what the model was sent
                self.assertEqual(turns[k]["messages"], prompts[k])          # what the run recorded
                self.assertEqual(turns[k]["score"], steps[k][1])
                self.assertEqual(turns[k]["correct"], steps[k][3]["correct"])
        self.assertEqual(turns[0]["parse_error"], steps[0][3]["parse_error"])
        self.assertEqual([s[1] for s in steps], [0.0, 0.0, 0.3])  # unparsable, crashing, correct (untimed)
        self.assertEqual([s[2] for s in steps], [False, False, True])
        self.assertIn("failed to parse: no ```cpp code block found", prompts[1][1]["content"])
        self.assertIn(steps[1][3]["feedback_line"], prompts[2][1]["content"])
        self.assertTrue(steps[1][3]["feedback_line"].startswith("runtime error: "), steps[1][3]["feedback_line"])
        self.assertNotIn("the last version was wrong", json.dumps(prompts))  # thoughts never shown

        returns, advantages = group_credit([env.scores])
        self.assertEqual([u["return"] for u in updates], returns[0])
        self.assertEqual([u["advantage"] for u in updates], advantages[0])

        # Without a service: the same feedback lines and scores from `kernelrl eval --batch`.
        _, local_prompts, local_steps = self.run_env(LocalEvaluator("host", CHEAP_OPTIONS, device="cpu"))
        self.assertEqual(local_prompts, prompts)
        self.assertEqual([s[1] for s in local_steps], [s[1] for s in steps])


if __name__ == "__main__":
    unittest.main()
