"""`kernelrl env` (src/rollout/env_protocol.hpp) as the package uses it, without a service: the
turn-1 prompt is the rollout's (system and user, the task's source, the one-shot example), later
prompts show earlier attempts without thoughts and drop the oldest over the budget, the parser's
outcomes and the feedback lines by status, and requests that cannot be answered name the field."""

from __future__ import annotations

import json
import unittest

from kernelrl_testing import SCRIPTED_RESPONSES, SOURCE_DIR, TASK_ADD

from kernelrl_client import EnvProtocol, ProtocolError


class Protocol(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.p = EnvProtocol()
        cls.source = TASK_ADD.read_text()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.p.close()

    def test_first_prompt(self) -> None:
        built = self.p.prompt("host", self.source, 1)
        system, user = built["messages"]
        self.assertEqual((system["role"], user["role"]), ("system", "user"))
        self.assertEqual(system["content"], (SOURCE_DIR / "prompts" / "system.txt").read_text())
        self.assertIn(self.source, user["content"])
        self.assertIn((SOURCE_DIR / "examples" / "vector_add" / "host.cpp").read_text(), user["content"])
        self.assertIn("Your code runs on the CPU", user["content"])  # host prompts name the CPU, not a GPU
        self.assertNotIn("H200", user["content"])
        self.assertEqual(built["n_attempts_shown"], 0)
        # GPU formats name the target GPU, the rollout's default or the one asked for.
        self.assertIn("an NVIDIA H200", self.p.prompt("native", self.source, 1)["messages"][1]["content"])
        self.assertIn("an NVIDIA L4", self.p.prompt("native", self.source, 1, gpu="an NVIDIA L4")["messages"][1]["content"])

    def test_later_prompts_show_attempts_oldest_dropped_first(self) -> None:
        previous = [{"code": f"int attempt_{i};\n", "summary": f"summary {i}", "feedback": f"incorrect: {i}"}
                    for i in range(3)]
        full = self.p.prompt("host", self.source, 4, previous)
        user = full["messages"][1]["content"]
        self.assertEqual(full["n_attempts_shown"], 3)
        self.assertLess(user.index("int attempt_0;"), user.index("int attempt_2;"))
        self.assertIn((SOURCE_DIR / "examples" / "vector_add" / "host.cpp").read_text(), user)  # every turn keeps it
        budget = sum(len(m["content"]) for m in full["messages"]) - 10  # over by less than one attempt
        cut = self.p.prompt("host", self.source, 4, previous, max_chars=budget)
        self.assertEqual((cut["n_attempts_shown"], cut["n_attempts_dropped"]), (2, 1))
        self.assertNotIn("int attempt_0;", cut["messages"][1]["content"])

    def test_parse(self) -> None:
        bad = self.p.parse("host", SCRIPTED_RESPONSES[0])
        self.assertEqual((bad["ok"], bad["parse_error"]), (False, "no ```cpp code block found"))
        good = self.p.parse("host", SCRIPTED_RESPONSES[2])
        self.assertTrue(good["ok"])
        self.assertIsNone(good["parse_error"])
        self.assertEqual(good["summary"], "Fixed: plain elementwise sum.")
        self.assertEqual(good["thoughts"], "the last version was wrong")
        self.assertFalse(self.p.parse("kernelbench", SCRIPTED_RESPONSES[2])["ok"])  # ```cpp is not python
        self.assertTrue(self.p.parse("kernelbench", SCRIPTED_RESPONSES[2], lenient=True)["ok"])
        cut = self.p.parse("host", "```cpp\nint x;")
        self.assertIn("not closed", cut["parse_error"])

    def test_outcomes(self) -> None:
        ok = self.p.outcome({"status": "OK", "correct": True, "speedup": 2.5, "runtime_us": 4.0, "ref_runtime_us": 10.0})
        self.assertEqual(ok, {"feedback": "correct, speedup 2.50x over PyTorch eager (4.0 us vs 10.0 us)",
                              "score": 2.8, "correct": True, "speedup": 2.5})
        self.assertEqual(self.p.outcome({"status": "OK", "correct": True, "speedup": 9.0}, speedup_cap=4.0)["score"], 4.3)
        self.assertEqual(self.p.outcome({"status": "OK", "correct": True, "speedup": 1.0}, w_correct=0.0)["score"], 1.0)
        wrong = self.p.outcome({"status": "WRONG_OUTPUT", "error": {"message": "output 0 differs"}})
        self.assertEqual((wrong["feedback"], wrong["score"], wrong["speedup"]), ("incorrect: output 0 differs", 0.0, None))
        compile_error = self.p.outcome({"status": "COMPILE_ERROR", "error": {"message": "nvcc failed", "compile_log": "x.cu:3: error"}})
        self.assertEqual(compile_error["feedback"], "failed to compile: nvcc failed\nx.cu:3: error")
        self.assertEqual(self.p.outcome(parse_error="the code block is empty")["feedback"], "failed to parse: the code block is empty")
        self.assertEqual(self.p.outcome(policy_error="HTTP 500")["feedback"], "no response: HTTP 500")

    def test_errors_name_the_field(self) -> None:
        cases = [({"op": "prompt", "format": "cuda", "task_source": "", "turn": 1}, "format: 'cuda' is not one of"),
                 ({"op": "prompt", "format": "host", "task_source": "", "turn": 0}, "turn: 0"),
                 ({"op": "prompt", "format": "host", "turn": 1}, "task_source: missing"),
                 ({"op": "prompt", "format": "host", "task_source": "", "turn": 2, "previous": [{"code": "x"}]},
                  r"previous\[0\]\.feedback: missing"),
                 ({"op": "prompt", "format": "host", "task_source": "", "turn": 1, "prompts_dir": "/nonexistent"},
                  "prompts_dir/example: .*/nonexistent"),
                 ({"op": "parse", "format": "host", "content": 3}, "content: 3 has the wrong type"),
                 ({"op": "outcome"}, "result: a `kernelrl eval --json` record is required"),
                 ({"op": "outcome", "result": {"could_not_evaluate": "task broken"}}, "could not be evaluated"),
                 ({"op": "credit", "scores": [[1.0]], "return": "min"}, "return: 'min' is not one of sum, max"),
                 ({"op": "frobnicate"}, "op: 'frobnicate' is not one of prompt, parse, outcome, credit")]
        for request, message in cases:
            with self.subTest(request=request):
                with self.assertRaisesRegex(ProtocolError, message):
                    self.p.call(request)
        self.assertEqual(self.p.call({"op": "credit", "scores": [[1.0]], "id": 7})["id"], 7)  # still answering


if __name__ == "__main__":
    unittest.main()
