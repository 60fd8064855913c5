"""What the adapters share: an evaluator from a service URL (or the local binary), and the text of
a completion in any of the shapes frameworks pass it (text, chat messages as dicts or as objects
with attributes, such as verifiers' pydantic messages)."""

from __future__ import annotations

import os
from typing import Any, Dict, Optional

from ..client import ServiceClient
from ..evaluators import Evaluator, LocalEvaluator, ServiceEvaluator, Task


def make_evaluator(format: str, service_url: Optional[str] = None, token_file: Optional[str] = None,
                   options: Optional[Dict[str, Any]] = None, **kwargs: Any) -> Evaluator:
    """The service at `service_url` (default $KERNELRL_SERVICE_URL; token from `token_file` or
    $KERNELRL_SERVICE_TOKEN_FILE), else the local `kernelrl eval`."""
    url = service_url or os.environ.get("KERNELRL_SERVICE_URL")
    if url:
        tokens = token_file or os.environ.get("KERNELRL_SERVICE_TOKEN_FILE")
        client = ServiceClient.from_token_file(url, tokens) if tokens else ServiceClient(url)
        return ServiceEvaluator(client, format, dict(options or {}), **kwargs)
    return LocalEvaluator(format, dict(options or {}), **kwargs)


def message_field(message: Any, name: str, default: Any = None) -> Any:
    """A chat message's field, whether the message is a dict or an object (verifiers >= 0.1.11
    passes pydantic models; reading them as dicts gave every answer as empty)."""
    if isinstance(message, dict):
        return message.get(name, default)
    return getattr(message, name, default)


def message_content(message: Any) -> str:
    """A chat message's text: its content as a string, or the text parts of a content list
    (dicts or objects with `type` "text"), joined by newlines; images are dropped."""
    content = message_field(message, "content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        return "\n".join(str(message_field(part, "text") or "") for part in content
                         if message_field(part, "type", "text") == "text")
    return str(content)


def completion_text(completion: Any) -> str:
    """A completion as text: a string, one chat message, or a list of chat messages (the last
    assistant message's content); messages may be dicts or objects (message_field)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, (list, tuple)):
        for message in reversed(completion):
            if message_field(message, "role", "assistant") == "assistant":
                return message_content(message)
        return ""
    if isinstance(completion, dict) or hasattr(completion, "content"):
        return message_content(completion)
    raise TypeError(f"completion: {type(completion).__name__} is neither text nor a list of chat messages")


def task_from_fields(task_source: Optional[str] = None, task_ref: Optional[str] = None,
                     task_name: Optional[str] = None) -> Task:
    """The task a dataset row names: its source text (required: the prompt shows it) and optionally
    its task-set path on the service."""
    if not task_source:
        raise ValueError("task_source: every row needs the task file's text (kernelrl_client.adapters.common.task_row)")
    return Task(source=task_source, name=task_name or "task.py", ref=task_ref or None)


def task_row(task: Task) -> Dict[str, str]:
    """The dataset fields that carry a task to the adapters."""
    row = {"task_source": task.source, "task_name": task.name}
    if task.ref:
        row["task_ref"] = task.ref
    return row
