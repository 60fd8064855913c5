"""KernelEnv: one multi-turn kernel trajectory as `kernelrl rollout` runs it (DESIGN.md "The recipe").

reset(task) gives turn 1's prompt; step(response) parses the response, evaluates its kernel, and
gives the feedback message (the next turn's user prompt: the task, the earlier attempts with their
code, summaries and feedback lines, and the instruction to restart), the turn's score, whether the
trajectory is done, and details. Prompts, parsing, feedback lines and scores come from the C++ that
the rollout runs (`kernelrl env`, src/rollout/env_protocol.hpp), so they are byte-identical to
`kernelrl rollout`'s; the package keeps no copy of them. step_many() steps many environments with
one evaluation batch (one service round trip for a whole GRPO group).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .credit import CreditConfig, returns
from .evaluators import Evaluator, Task
from .protocol import EnvProtocol, Message


@dataclass
class EnvConfig:
    format: str = "native"             # the candidate format the model writes: native | host | kernelbench
    n_turns: int = 4                   # turns per trajectory (Kevin: 4)
    gpu: Optional[str] = None          # GPU named in the prompt (default: the rollout's, "an NVIDIA H200")
    max_chars: Optional[int] = None    # prompt budget; older attempts dropped first (default: the rollout's)
    prompts_dir: Optional[str] = None  # prompt templates (default: the source tree's prompts/)
    example: Optional[str] = None      # one-shot example answer (default: examples/vector_add/ for the format)
    w_correct: Optional[float] = None  # score of a correct kernel on top of its speedup (default 0.3)
    speedup_cap: Optional[float] = None
    lenient: bool = False              # any fence language; a block cut off at the token limit counts

    def prompt_options(self) -> Dict[str, Any]:
        return {"gpu": self.gpu, "max_chars": self.max_chars, "prompts_dir": self.prompts_dir, "example": self.example}

    def score_options(self) -> Dict[str, Any]:
        return {"w_correct": self.w_correct, "speedup_cap": self.speedup_cap}


StepResult = Tuple[Message, float, bool, Dict[str, Any]]


@dataclass
class KernelEnv:
    """One trajectory at a time; not thread-safe (use one per trajectory; they may share the
    protocol and the evaluator)."""

    evaluator: Evaluator
    config: EnvConfig = field(default_factory=EnvConfig)
    protocol: Optional[EnvProtocol] = None  # default: a `kernelrl env` process of its own

    task: Optional[Task] = field(default=None, init=False)
    turn: int = field(default=0, init=False)                      # the turn the next step() answers (1-based)
    messages: List[Message] = field(default_factory=list, init=False)  # that turn's prompt
    attempts: List[Dict[str, str]] = field(default_factory=list, init=False)
    scores: List[float] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        if self.config.n_turns < 1:
            raise ValueError(f"n_turns: {self.config.n_turns} must be at least 1")
        if self.protocol is None:
            self.protocol = EnvProtocol()

    @property
    def done(self) -> bool:
        return self.task is not None and self.turn > self.config.n_turns

    def reset(self, task: Task) -> List[Message]:
        """Starts a trajectory on `task`; returns turn 1's prompt (system and user messages)."""
        self.task = task
        self.turn = 1
        self.attempts = []
        self.scores = []
        self.messages = self._prompt()
        return list(self.messages)

    def step(self, response: str, reasoning: str = "") -> StepResult:
        """Answers the current turn with the model's `response` (and its separate reasoning, if the
        server gives one): (feedback message, score, done, info)."""
        return KernelEnv.step_many([self], [response], [reasoning])[0]

    def returns(self, credit: CreditConfig = CreditConfig()) -> List[float]:
        """The recipe's return of each finished turn (discounted sum over later turns by default)."""
        return returns(self.scores, credit)

    @staticmethod
    def step_many(envs: Sequence["KernelEnv"], responses: Sequence[str],
                  reasonings: Optional[Sequence[str]] = None) -> List[StepResult]:
        """Steps every env with its response; all parsed kernels are evaluated in one batch of the
        first env's evaluator."""
        if len(envs) != len(responses):
            raise ValueError(f"step_many: {len(envs)} environments but {len(responses)} responses")
        reasonings = list(reasonings) if reasonings is not None else [""] * len(envs)
        parsed = []
        for env, response, reasoning in zip(envs, responses, reasonings):
            if env.task is None:
                raise RuntimeError("step() before reset(task)")
            if env.done:
                raise RuntimeError(f"step() after the last turn ({env.config.n_turns})")
            assert env.protocol is not None
            parsed.append(env.protocol.parse(env.config.format, response, reasoning or "", env.config.lenient))
        to_evaluate = [i for i, p in enumerate(parsed) if p["ok"]]
        results: Dict[int, Dict[str, Any]] = {}
        if to_evaluate:
            records = envs[0].evaluator.evaluate([(envs[i].task, parsed[i]["code"]) for i in to_evaluate])  # type: ignore[misc]
            results = dict(zip(to_evaluate, records))
        return [env._finish_turn(parsed[i], results.get(i)) for i, env in enumerate(envs)]

    # -- internals ------------------------------------------------------------------------------

    def _prompt(self) -> List[Message]:
        assert self.protocol is not None and self.task is not None
        built = self.protocol.prompt(self.config.format, self.task.source, self.turn, self.attempts,
                                     **self.config.prompt_options())
        return built["messages"]

    def _finish_turn(self, parsed: Dict[str, Any], result: Optional[Dict[str, Any]]) -> StepResult:
        assert self.protocol is not None
        parse_error = parsed["parse_error"]
        outcome = self.protocol.outcome(result, parse_error=parse_error, **self.config.score_options())
        # What later prompts show of this turn (rollout::FinishedTurn): no code for a parse error.
        self.attempts.append({"code": parsed["code"] if parsed["ok"] else "", "summary": parsed["summary"],
                              "feedback": outcome["feedback"]})
        self.scores.append(outcome["score"])
        info: Dict[str, Any] = {"turn": self.turn, "feedback_line": outcome["feedback"], "correct": outcome["correct"],
                                "speedup": outcome["speedup"], "parse_error": parse_error, "result": result,
                                "code": parsed["code"] if parsed["ok"] else None, "summary": parsed["summary"],
                                "thoughts": parsed["thoughts"]}
        self.turn += 1
        if self.done:
            self.messages = []
            feedback: Message = {"role": "user", "content": outcome["feedback"]}
        else:
            self.messages = self._prompt()
            feedback = {"role": "user", "content": self.messages[-1]["content"]}
            info["next_messages"] = list(self.messages)
        return feedback, float(outcome["score"]), self.done, info
