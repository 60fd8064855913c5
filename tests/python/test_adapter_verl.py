"""The verl adapters against a live local service with host tasks, called as verl 0.9 calls them:
compute_score from verl_reward.py loaded by file path as a standalone module (verl's loader) and
called as verl's naive reward manager calls it (data_source=, solution_str=, ground_truth=,
extra_info= with the fields the manager adds, **reward_kwargs); KernelAgentLoop made as verl's
AgentLoopWorker makes an agent loop (the agent loop config file's keys plus the worker's keyword
arguments) and run on one row with a scripted policy: every answer scored, each feedback the
environment's next prompt, and no environment left once the trajectory is done.
tests/python/release/check_verl.py runs the same against the real verl."""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import json
import unittest
from types import SimpleNamespace
from typing import Any, Dict, List, Optional

from adapter_testing import framework
from kernelrl_testing import CHEAP_OPTIONS, SCRIPTED_RESPONSES, TASK_ADD, TASK_ADD_REF, LocalService, host_answer

FRAMEWORK = framework("verl.experimental.agent_loop.agent_loop")

from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap  # noqa: E402

import kernelrl_client.adapters.verl_reward as verl_reward  # noqa: E402
from kernelrl_client import EnvConfig, EnvProtocol, KernelEnv, ServiceClient, ServiceEvaluator, Task  # noqa: E402
from kernelrl_client.adapters.verl import KernelAgentLoop  # noqa: E402

EOS = 256
CHAT_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
                 "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


class ByteTokenizer:
    """Bytes as token ids, one end-of-turn token, a ChatML chat template."""

    eos_token_id = EOS

    def encode(self, text: str, add_special_tokens: bool = False) -> List[int]:
        return list(text.encode())

    def decode(self, ids: List[int], skip_special_tokens: bool = False) -> str:
        return bytes(i for i in ids if i < 256).decode()

    def apply_chat_template(self, messages: List[Dict[str, Any]], add_generation_prompt: bool = False,
                            tokenize: bool = True) -> List[int]:
        text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
        return self.encode(text + ("<|im_start|>assistant\n" if add_generation_prompt else ""))


def byte_level_tokenizer(folder: Optional[str] = None) -> Any:
    """With verl installed, a Hugging Face tokenizer that verl's continuous-token builders accept and
    no download gives: one token per byte (every text round-trips), ChatML special tokens and chat
    template, saved to `folder` if given. Without verl, ByteTokenizer."""
    if FRAMEWORK == "recorded":
        return ByteTokenizer()
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens(specials)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    fast.chat_template = CHAT_TEMPLATE
    if folder:
        fast.save_pretrained(folder)
    return fast


class ScriptedServer:
    """verl's LLMServerClient.generate answered from a script; prompts recorded as text."""

    def __init__(self, tokenizer: ByteTokenizer, answers: List[str]) -> None:
        self.tokenizer, self.answers, self.prompts = tokenizer, list(answers), []

    async def generate(self, request_id: str, *, prompt_ids: List[int], sampling_params: Dict[str, Any],
                       **kwargs: Any) -> Any:
        self.prompts.append(self.tokenizer.decode(prompt_ids))
        ids = self.tokenizer.encode(self.answers.pop(0), add_special_tokens=False) + [self.tokenizer.eos_token_id]
        return SimpleNamespace(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed")


class Config(dict):
    """Attribute access and .get, as verl's OmegaConf config gives."""

    __getattr__ = dict.__getitem__


def trainer_config(max_assistant_turns: Any = None) -> Config:
    multi_turn = Config(enable=False, max_assistant_turns=max_assistant_turns)
    rollout = Config(prompt_length=8192, response_length=65536, multi_turn=multi_turn)
    return Config(actor_rollout_ref=Config(rollout=rollout), data=Config())


def load_by_path(path: str) -> Any:
    """verl.utils.import_utils.load_module for a file path: a standalone module of a made-up name."""
    spec = importlib.util.spec_from_file_location(f"custom_module_{hash(path)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def live_environments() -> int:
    """KernelEnv objects still referenced (no gc.collect(): one kept alive only by a cycle counts too)."""
    return sum(type(o) is KernelEnv for o in gc.get_objects())


class VerlAdapter(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.service = LocalService()
        cls.task = Task(source=TASK_ADD.read_text(), name="task_add.py", ref=TASK_ADD_REF)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.service.stop()

    def reward_kwargs(self) -> dict:
        return {"format": "host", "service_url": self.service.url, "options": CHEAP_OPTIONS}

    def test_compute_score_loaded_by_path(self) -> None:
        module = load_by_path(verl_reward.__file__)
        self.assertFalse(module.__name__.startswith("kernelrl_client"))
        row = verl_reward.kernel_rows([self.task], format="host")[0]
        self.assertEqual(row["reward_model"]["ground_truth"], self.task.source)
        answers = {"ok": host_answer("add_ok.cpp", "Plain sum."), "wrong": host_answer("add_wrong.cpp", "Sum."),
                   "unparsable": SCRIPTED_RESPONSES[0]}
        scores = {}
        for name, answer in answers.items():
            extra_info = {**row["extra_info"], "num_turns": None, "rollout_reward_scores": {}}  # what the manager adds
            scores[name] = module.compute_score(data_source=row["data_source"], solution_str=answer,
                                                ground_truth=row["reward_model"]["ground_truth"],
                                                extra_info=extra_info, **self.reward_kwargs())
        self.assertEqual(scores, {"ok": 0.3, "wrong": 0.0, "unparsable": 0.0})

    def test_agent_loop(self) -> None:
        tokenizer = byte_level_tokenizer()
        server = ScriptedServer(tokenizer, SCRIPTED_RESPONSES)
        config = trainer_config(max_assistant_turns=len(SCRIPTED_RESPONSES))  # n_turns from the rollout's setting
        agent_loop_yaml = {"name": "kernel_agent", "_target_": "kernelrl_client.adapters.verl.KernelAgentLoop",
                           **json.loads(json.dumps(self.reward_kwargs()))}
        loop_kwargs = {k: v for k, v in agent_loop_yaml.items() if k not in ("name", "_target_")}
        row = verl_reward.kernel_rows([self.task], format="host", agent_name="kernel_agent")[0]
        self.assertEqual(row["agent_name"], "kernel_agent")
        fields = {"raw_prompt": row["prompt"], "data_source": row["data_source"], "reward_model": row["reward_model"],
                  "extra_info": row["extra_info"], "index": 0, "tools_kwargs": {}, "interaction_kwargs": {}}

        async def trajectory():
            agent_loop = KernelAgentLoop(trainer_config=DictConfigWrap(config), server_manager=server,
                                         tokenizer=tokenizer, processor=None, hf_model_type="qwen2", dataset_cls=None,
                                         data_config=DictConfigWrap(config.data), tools=ToolListWrap([]),
                                         **loop_kwargs)
            return await agent_loop.run({"temperature": 1.0}, **fields)

        output = asyncio.run(trajectory())
        self.assertEqual(output.extra_fields["turn_scores"], [0.0, 0.0, 0.3])
        self.assertAlmostEqual(output.reward_score, 0.4 * 0.4 * 0.3)  # the recipe's return of turn 1
        self.assertEqual(len(server.prompts), 3)
        self.assertEqual(output.num_turns, 3 + 2 + 1)
        self.assertEqual(live_environments(), 0)
        # Each later prompt ends with the environment's next prompt as a user message.
        with EnvProtocol() as protocol:
            env = KernelEnv(ServiceEvaluator(ServiceClient(self.service.url), "host", CHEAP_OPTIONS),
                            EnvConfig(format="host", n_turns=3), protocol)
            env.reset(self.task)
            feedback = [env.step(r)[0]["content"] for r in SCRIPTED_RESPONSES]
        self.assertIn("failed to parse: no ```cpp code block found", feedback[0])
        for turn in (1, 2):
            self.assertTrue(server.prompts[turn].endswith(
                f"<|im_start|>user\n{feedback[turn - 1]}<|im_end|>\n<|im_start|>assistant\n"), f"turn {turn + 1}")
        # The model's tokens are trained on, the feedback's are not; the sequence is prompt + response.
        n_answer = sum(len(tokenizer.encode(r, add_special_tokens=False)) + 1 for r in SCRIPTED_RESPONSES)
        self.assertEqual(sum(output.response_mask), n_answer)
        self.assertEqual(len(output.response_ids), len(output.response_mask))
        self.assertEqual(len(output.response_logprobs), len(output.response_mask))
        self.assertEqual(tokenizer.decode(output.prompt_ids), server.prompts[0])
        self.assertTrue(tokenizer.decode(output.prompt_ids + output.response_ids).startswith(
            server.prompts[2] + SCRIPTED_RESPONSES[2]))

    def test_agent_loop_stops_when_the_response_budget_is_spent(self) -> None:
        tokenizer = byte_level_tokenizer()
        server = ScriptedServer(tokenizer, SCRIPTED_RESPONSES)
        config = trainer_config()
        config.actor_rollout_ref.rollout["response_length"] = len(SCRIPTED_RESPONSES[0]) + 100  # no room for feedback
        row = verl_reward.kernel_rows([self.task], format="host", agent_name="kernel_agent")[0]

        async def trajectory():
            agent_loop = KernelAgentLoop(trainer_config=DictConfigWrap(config), server_manager=server,
                                         tokenizer=tokenizer, processor=None, dataset_cls=None,
                                         data_config=DictConfigWrap(config.data), **self.reward_kwargs())
            self.assertEqual(agent_loop.env_config.n_turns, 4)  # neither n_turns nor max_assistant_turns: 4
            return await agent_loop.run({}, raw_prompt=row["prompt"], reward_model=row["reward_model"],
                                        extra_info=row["extra_info"])

        output = asyncio.run(trajectory())
        self.assertEqual(output.extra_fields["turn_scores"], [0.0])  # the one answer given, scored
        self.assertEqual(len(server.prompts), 1)
        self.assertEqual(live_environments(), 0)


if __name__ == "__main__":
    unittest.main()
