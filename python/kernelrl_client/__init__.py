"""kernelrl's kernel environment for other RL trainers (docs/integrations.md).

- ServiceClient: the evaluation service's HTTP API (submit, wait, batch).
- KernelEnv: multi-turn kernel tasks with `kernelrl rollout`'s prompts, parsing, feedback and scores.
- group_credit / returns / advantages: the recipe's credit, equal bit for bit to src/rl.
- adapters: verl (verl_reward.compute_score, KernelAgentLoop), TRL (KernelReward, KernelRollout),
  verifiers (KernelTaskset and KernelMultiTurnEnv; 0.3: the vf.MultiTurnEnv one).
"""

from .client import ServiceClient, ServiceError
from .credit import CreditConfig, advantages, group_credit, returns
from .env import EnvConfig, KernelEnv
from .evaluators import LocalEvaluator, ServiceEvaluator, Task
from .protocol import EnvProtocol, ProtocolError, find_kernelrl

__all__ = ["ServiceClient", "ServiceError", "CreditConfig", "advantages", "group_credit", "returns", "EnvConfig",
           "KernelEnv", "LocalEvaluator", "ServiceEvaluator", "Task", "EnvProtocol", "ProtocolError", "find_kernelrl"]
