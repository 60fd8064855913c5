"""What the adapters share: an evaluator from a service URL (or the local binary), and the text of
a completion in any of the shapes frameworks pass it."""

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


def completion_text(completion: Any) -> str:
    """A completion as text: a string, or a list of chat messages (the last assistant message's content)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return str(completion.get("content", ""))
    if isinstance(completion, (list, tuple)):
        for message in reversed(completion):
            if isinstance(message, dict) and message.get("role", "assistant") == "assistant":
                return str(message.get("content") or "")
        return ""
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
