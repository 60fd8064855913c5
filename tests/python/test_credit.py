"""kernelrl_client's returns and advantages equal the C++ (src/rl through `kernelrl env`, the code
`kernelrl rollout` credits with) bit for bit: on the shared fixtures in data/credit_fixtures.json
and on 300 random groups of every return and advantage kind."""

from __future__ import annotations

import json
import random
import unittest

from kernelrl_testing import SOURCE_DIR

from kernelrl_client import CreditConfig, EnvProtocol, ProtocolError, group_credit

FIXTURES = SOURCE_DIR / "tests" / "python" / "data" / "credit_fixtures.json"
CONFIG_FIELDS = {"gamma": "gamma", "return": "return_kind", "advantage": "advantage", "divide_by_std": "divide_by_std",
                 "eps": "eps"}


def bits(rows):
    return [[float(x).hex() for x in row] for row in rows]


class CreditMatchesCpp(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.protocol = EnvProtocol()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.protocol.close()

    def check(self, case: dict) -> None:
        options = {k: case[k] for k in CONFIG_FIELDS if k in case}
        cpp = self.protocol.credit(case["scores"], **options)
        R, A = group_credit(case["scores"], CreditConfig(**{CONFIG_FIELDS[k]: v for k, v in options.items()}))
        self.assertEqual(bits(R), bits(cpp["returns"]))
        self.assertEqual(bits(A), bits(cpp["advantages"]))

    def test_fixtures(self) -> None:
        for case in json.loads(FIXTURES.read_text()):
            with self.subTest(case["name"]):
                self.check(case)

    def test_kevin_fixture_values(self) -> None:
        # Not only equal to the C++, also the recipe: R_t = s_t + 0.4 R_{t+1}; GRPO over all 8 turns.
        R, A = group_credit([[0.0, 0.3, 1.72, 2.05], [0.0, 0.0, 0.0, 0.3]])
        self.assertAlmostEqual(R[0][3], 2.05)
        self.assertAlmostEqual(R[0][2], 1.72 + 0.4 * 2.05)
        self.assertAlmostEqual(R[1][0], 0.4 ** 3 * 0.3)
        self.assertAlmostEqual(sum(a for row in A for a in row), 0.0, places=12)
        self.assertGreater(A[0][2], 0)
        self.assertLess(A[1][1], 0)

    def test_random_groups(self) -> None:
        rng = random.Random(21)
        for i in range(300):
            m, n = rng.randint(1, 6), rng.randint(1, 5)
            scores = [[rng.choice([0.0, 0.0, 0.3, 0.3 + rng.uniform(0, 4)]) for _ in range(rng.randint(1, n))]
                      for _ in range(m)]
            case = {"scores": scores, "gamma": rng.choice([0.4, 0.4, rng.uniform(0, 1)]),
                    "return": rng.choice(["sum", "max"]),
                    "advantage": rng.choice(["grpo_task", "grpo_per_turn", "leave_one_out_turn"]),
                    "divide_by_std": rng.random() < 0.8}
            with self.subTest(i=i):
                self.check(case)

    def test_bad_configuration_names_the_field(self) -> None:
        with self.assertRaisesRegex(ProtocolError, "advantage: .*'grpo_group'"):
            self.protocol.credit([[1.0]], advantage="grpo_group")
        with self.assertRaisesRegex(ValueError, "advantage: 'grpo_group'"):
            CreditConfig(advantage="grpo_group")
        with self.assertRaisesRegex(ProtocolError, "gamma: must not be negative"):
            self.protocol.credit([[1.0]], gamma=-0.1)


if __name__ == "__main__":
    unittest.main()
