"""The verl adapters against the installed verl release, driven by verl's own code on the CPU
(scripts/adapters-check.sh verl runs it in .cache/venv-verl, cwd tests/python). Prints a JSON
summary; exits 1 on a failed check, 77 when verl is not installed.

What runs is verl's, except the inference engine: a scripted policy stands in for vLLM/SGLang
(verl's LLMServerClient.generate: prompt token ids in, answer token ids out) and a byte-level
tokenizer made here stands in for a model's (no download). The config is verl's own ppo_trainer
config composed by Hydra with the overrides a user gives on the command line; the dataset rows are
kernel_rows() written to parquet and read by verl's RLHFDataset; verl's AgentLoopWorker (called
directly, not as a Ray actor) runs the agent loops and hands single-turn trajectories to verl's
RewardLoopWorker, which loads the custom reward function by file path with verl's loader.

a) single turn, the reward function: a correct kernel scores > 0, a wrong one 0.
b) multi-turn, KernelAgentLoop: 4 answers, 4 scores, each feedback the environment's next prompt,
   and no KernelEnv alive once the trajectories are done.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
import tempfile
import traceback
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/python
from kernelrl_testing import (CHEAP_OPTIONS, SCRIPTED_RESPONSES, SOURCE_DIR, TASK_ADD, TASK_ADD_REF,  # noqa: E402
                              LocalService, host_answer)

# kernelrl_testing put the source tree's python/ first on the path: the check is of the package
# as installed in this venv.
sys.path[:] = [p for p in sys.path if Path(p).resolve() != (SOURCE_DIR / "python").resolve()]

try:
    import verl
    import verl.experimental.agent_loop  # noqa: F401 (registers verl's own agent loops)
except ImportError as e:
    print(f"skipped: {sys.executable} cannot import {e.name} (scripts/adapters-check.sh verl installs it)")
    sys.exit(77)

import pandas as pd  # noqa: E402 (verl's dependencies from here on)
import torch  # noqa: E402
from hydra import compose, initialize_config_dir  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402

import kernelrl_client  # noqa: E402
from kernelrl_client import EnvConfig, EnvProtocol, KernelEnv, ServiceClient, ServiceEvaluator, Task  # noqa: E402
from kernelrl_client.adapters import verl_reward  # noqa: E402
from test_adapter_verl import byte_level_tokenizer  # noqa: E402

INSTALLED = Path(kernelrl_client.__file__).resolve()
assert (SOURCE_DIR / "python").resolve() not in INSTALLED.parents, f"kernelrl_client imported from python/: {INSTALLED}"

N_TURNS = 4
MULTI_TURN_ANSWERS = SCRIPTED_RESPONSES + [SCRIPTED_RESPONSES[-1]]  # unparsable, crash, correct, correct
PROMPT_LENGTH = 8192   # tokens: one byte each with the tokenizer below
RESPONSE_LENGTH = 65536


def byte_tokenizer_model(folder: Path) -> None:
    """A model folder verl's HFModelConfig accepts without a download: the unit test's byte-level
    tokenizer (ChatML; every text round-trips exactly) and a tiny Qwen2 config.json (so verl picks
    its Qwen continuous-token builder, as for Qwen2.5-Coder)."""
    from transformers import Qwen2Config

    tokenizer = byte_level_tokenizer(str(folder))
    Qwen2Config(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                num_attention_heads=2, num_key_value_heads=1, eos_token_id=tokenizer.eos_token_id,
                pad_token_id=tokenizer.pad_token_id, architectures=["Qwen2ForCausalLM"]).save_pretrained(str(folder))


class ScriptedPolicy:
    """verl's LLMServerClient.generate, answered from a script in call order (one trajectory at a
    time); records the prompts it was given as text."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.script: List[str] = []
        self.prompts: List[str] = []

    async def generate(self, request_id: str, *, prompt_ids: List[int], sampling_params: Dict[str, Any],
                       **kwargs: Any) -> Any:
        from verl.workers.rollout.replica import TokenOutput
        self.prompts.append(self.tokenizer.decode(prompt_ids))
        answer = self.script.pop(0)
        ids = self.tokenizer.encode(answer, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed")


class LocalActor:
    """What a Ray actor handle offers its caller (handle.method.remote(...), awaited), for a local
    object: AgentLoopWorker calls its reward workers so."""

    def __init__(self, obj: Any) -> None:
        self._obj = obj

    def __getattr__(self, name: str) -> Any:
        return SimpleNamespace(remote=getattr(self._obj, name))


def compose_config(model: Path, agent_loops: Path, reward_kwargs: Dict[str, Any]) -> Any:
    """verl's ppo_trainer config with a user's command-line overrides, as `python -m
    verl.trainer.main_ppo` composes it."""
    reward_file = Path(verl_reward.__file__).resolve()
    overrides = [
        f"actor_rollout_ref.model.path={model}",
        "actor_rollout_ref.rollout.name=vllm",
        f"actor_rollout_ref.rollout.prompt_length={PROMPT_LENGTH}",
        f"actor_rollout_ref.rollout.response_length={RESPONSE_LENGTH}",
        f"actor_rollout_ref.rollout.agent.agent_loop_config_path={agent_loops}",
        f"actor_rollout_ref.rollout.multi_turn.max_assistant_turns={N_TURNS}",
        f"data.max_prompt_length={PROMPT_LENGTH}",
        f"data.max_response_length={RESPONSE_LENGTH}",
        f"reward.custom_reward_function.path={reward_file}",
        "reward.custom_reward_function.name=compute_score",
        "+reward.custom_reward_function.reward_kwargs=" + json.dumps(reward_kwargs).replace('"', ""),
    ]
    overrides += os.environ.get("KERNELRL_VERL_OVERRIDES", "").split()  # e.g. data.continuous_token.enable=True (verl 0.9.0)
    config_dir = Path(verl.__file__).parent / "trainer" / "config"
    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        return compose(config_name="ppo_trainer", overrides=overrides)


def dataset_batch(config: Any, tokenizer: Any, rows: List[Dict[str, Any]], folder: Path, name: str) -> Any:
    """The rows as the trainer's generation batch: parquet, verl's RLHFDataset and collate_fn."""
    from verl import DataProto
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

    path = folder / f"{name}.parquet"
    pd.DataFrame(rows).to_parquet(path)
    dataset = RLHFDataset(data_files=[str(path)], tokenizer=tokenizer, config=config.data, processor=None)
    batch = DataProto.from_single_dict(collate_fn([dataset[i] for i in range(len(dataset))]))
    batch.meta_info["global_steps"] = 1
    return batch


def live_environments() -> int:
    """KernelEnv objects still referenced (no gc.collect(): one kept alive only by a cycle counts too)."""
    return sum(type(o) is KernelEnv for o in gc.get_objects())


def run(service: LocalService, work: Path) -> Dict[str, Any]:
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker
    from transformers import AutoTokenizer

    model = work / "model"
    byte_tokenizer_model(model)
    tokenizer = AutoTokenizer.from_pretrained(str(model))
    kwargs = {"format": "host", "service_url": service.url, "options": CHEAP_OPTIONS}
    agent_loops = work / "kernel_agent.yaml"
    # No n_turns: the loop takes multi_turn.max_assistant_turns (the setting that scored 3 of 4 turns before).
    OmegaConf.save(OmegaConf.create([{"name": "kernel_agent", "_target_": "kernelrl_client.adapters.verl.KernelAgentLoop",
                                      **kwargs}]), agent_loops)
    config = compose_config(model, agent_loops, kwargs)
    summary: Dict[str, Any] = {"verl": verl.__version__, "torch": torch.__version__,
                               "kernelrl_client": str(INSTALLED.parent)}

    failures: List[str] = []
    loop = asyncio.new_event_loop()  # one loop for everything, as in verl's Ray actors (they keep theirs)
    asyncio.set_event_loop(loop)
    reward_worker = RewardLoopWorker(config)  # loads the reward function by file path, verl's way
    loaded = reward_worker.reward_manager.compute_score.args[0]  # get_custom_reward_fn's partial(_call_with_kwargs, fn, kwargs)
    summary["reward_function"] = {"path": config.reward.custom_reward_function.path,
                                  "loaded_as": f"{loaded.__module__}.{loaded.__name__}"}
    from verl.utils.import_utils import load_extern_object
    by_package = load_extern_object(module_path="pkg://kernelrl_client.adapters.verl_reward", object_name="compute_score")
    summary["reward_function"]["pkg_path_loads"] = by_package is verl_reward.compute_score
    if by_package is not verl_reward.compute_score:
        failures.append("a) pkg://kernelrl_client.adapters.verl_reward did not load the package's compute_score")
    if loaded.__module__.startswith("kernelrl_client"):
        failures.append(f"a) verl imported the reward function as a package module ({loaded.__module__}), not by path")
    policy = ScriptedPolicy(tokenizer)
    worker = AgentLoopWorker(config, policy, reward_loop_worker_handles=[LocalActor(reward_worker)])
    task = Task(source=TASK_ADD.read_text(), name="task_add.py", ref=TASK_ADD_REF)

    # a) single turn: verl's single_turn_agent, then the reward loop with the custom reward function.
    single = {}
    for case, answer in (("correct", host_answer("add_ok.cpp", "Plain sum.")),
                         ("wrong", host_answer("add_wrong.cpp", "Sum, off by something."))):
        rows = verl_reward.kernel_rows([task], format="host", agent_name="single_turn_agent")
        policy.script = [answer]
        out = loop.run_until_complete(worker.generate_sequences(dataset_batch(config, tokenizer, rows, work, case)))
        single[case] = float(out.batch["rm_scores"].sum())
    summary["single_turn_rewards"] = single
    if not single["correct"] > 0:
        failures.append(f"a) the correct kernel's reward is {single['correct']}, not > 0")
    if single["wrong"] != 0:
        failures.append(f"a) the wrong kernel's reward is {single['wrong']}, not 0")

    # b) multi-turn: KernelAgentLoop from the agent loop config file, two trajectories one after the other.
    trajectories = []
    for i in range(2):
        rows = verl_reward.kernel_rows([task], format="host", agent_name="kernel_agent")
        policy.script, policy.prompts = list(MULTI_TURN_ANSWERS), []
        out = loop.run_until_complete(worker.generate_sequences(dataset_batch(config, tokenizer, rows, work, f"multi{i}")))
        turn_scores = [float(s) for s in out.non_tensor_batch["turn_scores"][0]]
        trajectories.append({"turn_scores": turn_scores, "reward": float(out.batch["rm_scores"].sum()),
                             "num_turns": int(out.non_tensor_batch["__num_turns__"][0]),
                             "n_generate_calls": len(policy.prompts), "prompts": list(policy.prompts),
                             "response_mask_ones": int(out.batch["response_mask"].sum())})
    # The feedback the policy saw is the environment's next prompt, byte for byte.
    with EnvProtocol() as protocol:
        env = KernelEnv(ServiceEvaluator(ServiceClient(service.url), "host", CHEAP_OPTIONS),
                        EnvConfig(format="host", n_turns=N_TURNS), protocol)
        env.reset(task)
        expected = [env.step(a) for a in MULTI_TURN_ANSWERS]
    expected_scores = [score for _, score, _, _ in expected]
    del env
    for t in trajectories:
        prompts = t.pop("prompts")
        for turn, (feedback, _, done, _) in enumerate(expected[:-1]):
            if f"<|im_start|>user\n{feedback['content']}<|im_end|>\n<|im_start|>assistant\n" not in prompts[turn + 1]:
                failures.append(f"b) turn {turn + 2}'s prompt does not end with the environment's feedback")
    n_live = live_environments()
    summary["multi_turn"] = {"n_turns": N_TURNS, "expected_turn_scores": expected_scores, "trajectories": trajectories,
                             "live_environments_after": n_live}
    n_answer_tokens = sum(len(tokenizer.encode(a, add_special_tokens=False)) + 1 for a in MULTI_TURN_ANSWERS)
    for t in trajectories:
        if t["response_mask_ones"] != n_answer_tokens:  # the model's tokens are trained on, the feedback's not
            failures.append(f"b) {t['response_mask_ones']} response tokens masked in, the answers have {n_answer_tokens}")
        if t["turn_scores"] != expected_scores or t["n_generate_calls"] != N_TURNS:
            failures.append(f"b) {t['n_generate_calls']} answers scored {t['turn_scores']}, expected {N_TURNS} "
                            f"scored {expected_scores}")
        if not t["reward"] > 0:
            failures.append(f"b) trajectory reward {t['reward']} is not > 0")
    if n_live:
        failures.append(f"b) {n_live} KernelEnv objects still alive after the trajectories")
    summary["failures"] = failures
    return summary


def main() -> int:
    service = LocalService()
    try:
        with tempfile.TemporaryDirectory(prefix="kernelrl-verl-check-") as work:
            summary = run(service, Path(work))
    except Exception:
        traceback.print_exc()
        print(json.dumps({"verl": getattr(verl, "__version__", "?"), "failures": ["the check raised (above)"]}))
        return 1
    finally:
        service.stop()
    print(json.dumps(summary, indent=1))
    return 1 if summary["failures"] else 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
