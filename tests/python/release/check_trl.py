"""The TRL adapter against the TRL release installed in this interpreter (scripts/adapters-check.sh
trl: .cache/venv-trl, with the kernelrl-client wheel built from python/), called by TRL's own
GRPOTrainer on the CPU, with a live local service (redis-server, `kernelrl serve`, one CPU worker)
and the service test task in the host format. The policy is the project's default model
(SmolLM2-135M-Instruct from its GGUF, converted with `kernelrl convert`); a 135M model never writes
a correct kernel, so where a step needs one correct and one wrong kernel the answers are scripted
and tokenized with the model's tokenizer, and the trainer then trains on them as on its own:
  reward      KernelReward as a reward function; completions from a rollout_func giving one wrong
              and one correct kernel: rewards 0 and > 0, one GRPO step, parameters change.
  multi_turn  KernelRollout as the rollout_func (2 turns; rollout 0: wrong, wrong; rollout 1:
              wrong, correct) with kernel_return_reward: returns 0 and > 0, the environment's
              tokens masked, one GRPO step, parameters change.
  generation  KernelRollout with its default generator, the trained model writing both turns.
Prints one JSON summary; exits 1 if a check failed, 77 if this interpreter has no TRL.

    cd tests/python && ../../.cache/venv-trl/bin/python release/check_trl.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/python
from kernelrl_testing import CHEAP_OPTIONS, KERNELRL, SOURCE_DIR, TASK_ADD, TASK_ADD_REF, LocalService, host_answer

# kernelrl_testing puts the source tree's python/ first on the path; this check is of the wheel
# installed in the venv.
sys.path[:] = [p for p in sys.path if Path(p).resolve() != (SOURCE_DIR / "python").resolve()]
assert "kernelrl_client" not in sys.modules

try:
    import datasets
    import torch
    import transformers
    import trl
except ImportError as e:
    print(f"skipped: this interpreter ({sys.executable}) cannot import {e.name} "
          "(scripts/adapters-check.sh trl installs tests/python/release/requirements-trl.txt)")
    sys.exit(77)

import kernelrl_client
from kernelrl_client import Task
from kernelrl_client.adapters.trl import KernelReward, KernelRollout, kernel_dataset, kernel_return_reward

GGUF = Path(os.environ.get("KERNELRL_DEFAULT_GGUF", SOURCE_DIR / ".cache/models/SmolLM2-135M-Instruct.Q4_1.gguf"))
WRONG = host_answer("add_wrong.cpp", "Adds the two inputs.")  # WRONG_OUTPUT
CORRECT = host_answer("add_ok.cpp", "Plain elementwise sum.")  # correct: w_correct (0.3) without timing


def scripted_completions(answers: List[str]) -> Any:
    """A rollout_func answering the i-th prompt of each batch with answers[i], tokenized."""
    def rollout_func(prompts: List[Any], trainer: Any) -> Dict[str, Any]:
        tokenizer = trainer.processing_class
        prompt_ids = [tokenizer.apply_chat_template(p, tokenize=True, add_generation_prompt=True, return_dict=False)
                      for p in prompts]
        completion_ids = [tokenizer.encode(answers[i], add_special_tokens=False) + [tokenizer.eos_token_id]
                          for i in range(len(prompts))]
        return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "logprobs": None}
    return rollout_func


class ScriptedTurns:
    """A KernelRollout generator: in its t-th call, the i-th context gets scripts[i][t], tokenized."""

    def __init__(self, scripts: List[List[str]]) -> None:
        self.scripts = scripts
        self.n_calls = 0

    def __call__(self, trainer: Any, contexts: List[List[int]], max_new_tokens: int) -> List[List[int]]:
        tokenizer = trainer.processing_class
        turn, self.n_calls = self.n_calls, self.n_calls + 1
        return [tokenizer.encode(self.scripts[i][turn], add_special_tokens=False) + [tokenizer.eos_token_id]
                for i in range(len(contexts))]


def grpo_step(model_dir: Path, tokenizer: Any, rows: List[Dict[str, Any]], out: Path,
              **trainer_args: Any) -> Dict[str, Any]:
    """One GRPOTrainer step (2 completions of 1 prompt); the trainer and what changed."""
    # bf16=False: TRL >= 1 defaults to bf16 autocast, which a CPU without bf16 instructions
    # emulates (a step took 15 minutes instead of one).
    args = trl.GRPOConfig(output_dir=str(out), max_steps=1, per_device_train_batch_size=2, num_generations=2,
                          max_completion_length=64, learning_rate=1e-5, logging_steps=1, use_cpu=True, bf16=False,
                          report_to=[], save_strategy="no", seed=21)
    trainer = trl.GRPOTrainer(model=str(model_dir), args=args, train_dataset=datasets.Dataset.from_list(rows),
                              processing_class=tokenizer, **trainer_args)
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    t0 = time.monotonic()
    trainer.train()
    step_s = time.monotonic() - t0
    n_changed = sum(int(not torch.equal(before[n], p.detach())) for n, p in trainer.model.named_parameters())
    logs = getattr(trainer, "_logs", {})  # per-completion rewards and advantages (TRL 1.x keeps them for its table)
    log = trainer.state.log_history[0] if trainer.state.log_history else {}
    shown = ("reward", "kernel", "completions/mean_length", "loss")
    return {"trainer": trainer, "global_step": trainer.state.global_step, "step_s": round(step_s, 1),
            "n_parameters_changed": n_changed, "n_parameters": len(before),
            "rewards": {k: [round(r, 4) for r in v] for k, v in logs.get("rewards", {}).items()},
            "advantages": [round(a, 4) for a in logs.get("advantages", [])],
            "log": {k: v for k, v in log.items() if k.startswith(shown)}}


def main() -> int:
    if not GGUF.exists():
        print(f"skipped: {GGUF} is missing (scripts/fetch-default-model.sh)")
        return 77
    summary: Dict[str, Any] = {"versions": {"trl": trl.__version__, "torch": torch.__version__,
                                            "transformers": transformers.__version__, "datasets": datasets.__version__},
                               "kernelrl_client": str(Path(kernelrl_client.__file__).parent), "model": GGUF.name}
    failed: List[str] = []

    def check(ok: bool, what: str) -> None:
        if not ok:
            failed.append(what)

    check(not Path(kernelrl_client.__file__).resolve().is_relative_to((SOURCE_DIR / "python").resolve()),
          "kernelrl_client was imported from the source tree, not the installed wheel")
    work = Path(tempfile.mkdtemp(prefix="kernelrl-check-trl-"))
    service = LocalService()
    try:
        model_dir = work / "model"
        subprocess.run([KERNELRL, "convert", str(GGUF), str(model_dir)], check=True, stdout=subprocess.DEVNULL)
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(GGUF.parent), gguf_file=GGUF.name)
        tokenizer.save_pretrained(str(model_dir))
        task = Task(source=TASK_ADD.read_text(), name="task_add.py", ref=TASK_ADD_REF)
        rows = kernel_dataset([task], format="host")

        # KernelReward as GRPOTrainer calls a reward function: completions decoded by the trainer.
        reward = KernelReward(format="host", service_url=service.url, options=CHEAP_OPTIONS)
        step = grpo_step(model_dir, tokenizer, rows, work / "reward", reward_funcs=[reward],
                         rollout_func=scripted_completions([WRONG, CORRECT]))
        step.pop("trainer")
        step["correct"] = [info["correct"] for info in reward.last_infos]
        step["feedback"] = [info["feedback_line"] for info in reward.last_infos]
        summary["reward"] = step
        rewards = step["rewards"].get("kernel_score", [])
        check(step["correct"] == [False, True], "reward: the scripted kernels were not judged wrong, correct")
        check(len(rewards) == 2 and rewards[0] == 0.0 and rewards[1] > 0, f"reward: rewards {rewards}, not [0, > 0]")
        check(step["global_step"] == 1 and step["n_parameters_changed"] > 0, "reward: the GRPO step changed nothing")

        # KernelRollout as the rollout_func: two 2-turn trajectories, the model's answers scripted.
        rollout = KernelRollout(format="host", n_turns=2, service_url=service.url, options=CHEAP_OPTIONS,
                                generate=ScriptedTurns([[WRONG, WRONG], [WRONG, CORRECT]]))
        step = grpo_step(model_dir, tokenizer, rows, work / "multi_turn", reward_funcs=[kernel_return_reward],
                         rollout_func=rollout)
        trainer = step.pop("trainer")
        step["kernel_scores"] = [env.scores for env in rollout.last_envs]
        summary["multi_turn"] = step
        rewards = step["rewards"].get("kernel_return_reward", [])
        check(step["kernel_scores"] == [[0.0, 0.0], [0.0, 0.3]], f"multi_turn: turn scores {step['kernel_scores']}")
        check(len(rewards) == 2 and rewards[0] == 0.0 and rewards[1] > 0, f"multi_turn: rewards {rewards}, not [0, >0]")
        check(step["global_step"] == 1 and step["n_parameters_changed"] > 0, "multi_turn: the GRPO step changed nothing")
        answers = (WRONG, WRONG, WRONG, CORRECT)
        n_answer_tokens = sum(len(tokenizer.encode(a, add_special_tokens=False)) + 1 for a in answers)  # + stop token
        mean_length = step["log"].get("completions/mean_length")
        check(mean_length == n_answer_tokens / 2, f"multi_turn: mean completion length {mean_length} is not the "
              f"answers' {n_answer_tokens / 2} (environment tokens not masked)")

        # KernelRollout's default generator: the trained model writes both turns itself.
        rollout = KernelRollout(format="host", n_turns=2, service_url=service.url, options=CHEAP_OPTIONS,
                                max_turn_tokens=32)
        t0 = time.monotonic()
        output = rollout([rows[0]["prompt"]] * 2, trainer)
        generation = {"s": round(time.monotonic() - t0, 1), "kernel_scores": output["kernel_scores"],
                      "n_model_tokens": [sum(m) for m in output["env_mask"]],
                      "n_env_tokens": [len(m) - sum(m) for m in output["env_mask"]],
                      "turn_1": [env.attempts[0]["feedback"] for env in rollout.last_envs]}
        summary["generation"] = generation
        for ids, mask in zip(output["completion_ids"], output["env_mask"]):
            reply = tokenizer.decode([t for t, m in zip(ids, mask) if not m])
            check(len(ids) == len(mask) and 0 < sum(mask) <= 2 * 32, "generation: no model tokens, or over the limit")
            check("<|im_start|>user" in reply and task.source.splitlines()[0] in reply,
                  "generation: the masked tokens are not the environment's next prompt")
    finally:
        service.stop()
        shutil.rmtree(work, ignore_errors=True)
    summary["failed"] = failed
    print(json.dumps(summary, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
