"""Recorded interface of verl's agent loop (verl 0.9.1, verl/experimental/agent_loop/agent_loop.py),
what KernelAgentLoop uses of it: AgentLoopWorker instantiates the class an agent loop config file
names (hydra.utils.instantiate with the file's keys and the keyword arguments below), one instance
per trajectory, and awaits run(sampling_params, **row fields). The continuous-token helpers render
the tokenizer's chat template: the first prompt with the generation prompt, the model's tokens
appended as they are (mask 1), appended messages as the template renders them after the earlier
ones (mask 0). AgentLoopOutput is a pydantic model there, with these fields."""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

RECORDED = True


class DictConfigWrap:
    def __init__(self, config: Any):
        self.config = config


class ToolListWrap:
    def __init__(self, tools: list):
        self.tools = tools


@dataclass
class MergeResult:  # verl.utils.tokenizer.continuous_token.MergeResult
    token_ids: List[int]
    appended_token_count: int
    kind: str


@dataclass
class AgentLoopMetrics:
    generate_sequences: float = 0.0
    tool_calls: float = 0.0
    compute_score: float = 0.0
    num_preempted: int = -1


@dataclass
class AgentLoopOutput:
    prompt_ids: List[int]
    response_ids: List[int]
    response_mask: List[int]
    metrics: Any
    response_logprobs: Optional[List[float]] = None
    routed_experts: Optional[Any] = None
    multi_modal_data: Optional[Dict[str, Any]] = None
    reward_score: Optional[float] = None
    num_turns: int = 0
    extra_fields: Dict[str, Any] = field(default_factory=dict)
    mm_processor_kwargs: Optional[Dict[str, Any]] = None
    mm_processor_output: Optional[List[Dict[str, Any]]] = None

    def __post_init__(self) -> None:
        if isinstance(self.metrics, dict):
            self.metrics = AgentLoopMetrics(**self.metrics)


class AgentLoopBase:
    def __init__(self, trainer_config: DictConfigWrap, server_manager: Any, tokenizer: Any, processor: Any,
                 dataset_cls: Any, data_config: DictConfigWrap, hf_model_type: Optional[str] = None, **kwargs: Any):
        import asyncio
        self.config = trainer_config.config
        self.rollout_config = self.config.actor_rollout_ref.rollout
        self.server_manager = server_manager
        self.tokenizer = tokenizer
        self.processor = processor
        self.dataset_cls = dataset_cls
        self.data_config = data_config.config
        self.loop = asyncio.get_event_loop()

    def _render(self, messages: List[Dict[str, Any]], add_generation_prompt: bool) -> List[int]:
        return list(self.tokenizer.apply_chat_template(messages, add_generation_prompt=add_generation_prompt,
                                                       tokenize=True))

    async def ct_build_initial_tokens(self, messages: List[Dict[str, Any]], tools: Optional[List[Dict]] = None,
                                      **kwargs: Any) -> List[int]:
        return self._render(messages, add_generation_prompt=True)[-self.rollout_config.prompt_length:]

    async def ct_merge_assistant_token(self, runtime_token_ids: List[int], assistant_token_ids: List[int],
                                       response_mask: List[int], response_logprobs: Optional[List[float]] = None,
                                       assistant_logprobs: Optional[List[float]] = None):
        n = len(assistant_token_ids)
        logprobs = None
        if response_logprobs is not None:
            logprobs = list(response_logprobs) + list(assistant_logprobs or [0.0] * n)
        return (MergeResult(list(runtime_token_ids) + list(assistant_token_ids), n, "assistant"),
                list(response_mask) + [1] * n, logprobs)

    async def ct_merge_context_msg(self, previous_messages: List[Dict[str, Any]], updated_messages: List[Dict[str, Any]],
                                   runtime_token_ids: List[int], response_mask: List[int],
                                   response_logprobs: Optional[List[float]] = None, tools: Optional[List[Dict]] = None):
        before = self._render(previous_messages, add_generation_prompt=False)
        appended = self._render(updated_messages, add_generation_prompt=True)[len(before):]
        n = len(appended)
        logprobs = list(response_logprobs) + [0.0] * n if response_logprobs is not None else None
        return (MergeResult(list(runtime_token_ids) + appended, n, "context"), list(response_mask) + [0] * n, logprobs)

    async def run(self, sampling_params: Dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        raise NotImplementedError
