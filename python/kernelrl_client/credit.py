"""The recipe's returns and advantages (DESIGN.md "The recipe", src/rl/rewards.cpp) as plain Python
over one task's group of trajectories, for trainers that assign credit themselves.

Each function performs the same floating-point operations in the same order as the C++, so the
results are equal bit for bit (tests/python/test_credit.py checks them against `kernelrl env`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Sequence, Tuple

RETURN_KINDS = ("sum", "max")
ADVANTAGE_KINDS = ("grpo_task", "grpo_per_turn", "leave_one_out_turn")


@dataclass(frozen=True)
class CreditConfig:
    gamma: float = 0.4             # discount per later turn (Kevin: 0.4)
    return_kind: str = "sum"       # "sum": R_t = sum_{i>=t} gamma^(i-t) s_i; "max": the max of those terms
    advantage: str = "grpo_task"   # GRPO over all m x n turns of the task (Kevin), per turn, or leave-one-out per turn
    divide_by_std: bool = True     # GRPO kinds: False keeps only the mean subtraction (Dr. GRPO)
    eps: float = 1e-6              # added to the sample standard deviation (n - 1)

    def __post_init__(self) -> None:
        if not self.gamma >= 0:
            raise ValueError(f"gamma: {self.gamma} must not be negative")
        if self.return_kind not in RETURN_KINDS:
            raise ValueError(f"return_kind: '{self.return_kind}' is not one of {', '.join(RETURN_KINDS)}")
        if self.advantage not in ADVANTAGE_KINDS:
            raise ValueError(f"advantage: '{self.advantage}' is not one of {', '.join(ADVANTAGE_KINDS)}")


def returns(scores: Sequence[float], config: CreditConfig = CreditConfig()) -> List[float]:
    """The return of every turn of one trajectory, from its per-turn scores (rl::returns)."""
    R = [0.0] * len(scores)
    later = 0.0  # R_{t+1}
    for k in range(len(scores) - 1, -1, -1):
        s_t = float(scores[k])
        discounted_later = config.gamma * later
        if config.return_kind == "sum":
            R[k] = s_t + discounted_later
        else:
            R[k] = s_t if k + 1 == len(scores) else max(s_t, discounted_later)
        later = R[k]
    return R


def _moments(xs: List[float]) -> Tuple[float, float]:
    mean = 0.0
    for x in xs:
        mean += x
    mean /= float(len(xs))
    if len(xs) < 2:
        return mean, 0.0
    ss = 0.0
    for x in xs:
        ss += (x - mean) * (x - mean)
    return mean, math.sqrt(ss / float(len(xs) - 1))


def _normalise_group(R: Sequence[Sequence[float]], group: List[Tuple[int, int]], config: CreditConfig,
                     A: List[List[float]]) -> None:
    if len(group) < 2:
        return  # nothing to compare against: advantage stays 0
    mean, std = _moments([R[i][t] for i, t in group])
    n = float(len(group))
    for i, t in group:
        centred = R[i][t] - mean
        if config.advantage == "leave_one_out_turn":
            A[i][t] = n / (n - 1) * centred  # R_i - mean of the others
        else:
            A[i][t] = centred / (std + config.eps) if config.divide_by_std else centred


def advantages(returns_by_trajectory: Sequence[Sequence[float]], config: CreditConfig = CreditConfig()) -> List[List[float]]:
    """The advantage of every turn of every trajectory of one task (rl::advantages); trajectories may
    have different numbers of turns; a group of one sample gets 0."""
    R = [[float(x) for x in traj] for traj in returns_by_trajectory]
    A = [[0.0] * len(traj) for traj in R]
    if config.advantage == "grpo_task":
        _normalise_group(R, [(i, t) for i in range(len(R)) for t in range(len(R[i]))], config, A)
        return A
    n_turns = max((len(traj) for traj in R), default=0)
    for t in range(n_turns):
        _normalise_group(R, [(i, t) for i in range(len(R)) if t < len(R[i])], config, A)
    return A


def group_credit(scores_by_trajectory: Sequence[Sequence[float]],
                 config: CreditConfig = CreditConfig()) -> Tuple[List[List[float]], List[List[float]]]:
    """(returns, advantages) of one task's trajectories, indexed [trajectory][turn], as
    `kernelrl rollout` credits them (without beam branching)."""
    R = [returns(s, config) for s in scores_by_trajectory]
    return R, advantages(R, config)
