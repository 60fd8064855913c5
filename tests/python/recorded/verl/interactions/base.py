"""Recorded interface of verl's BaseInteraction (verl 0.5, verl/interactions/base.py): the
constructor takes the interaction's config dict and keeps its name; the four methods are async."""

from typing import Any, Dict, List, Optional, Tuple
from uuid import uuid4

RECORDED = True


class BaseInteraction:
    def __init__(self, config: Dict[str, Any]):
        self.config = config
        self.name: str = config.get("name", "interaction_agent")

    async def start_interaction(self, instance_id: Optional[str] = None, **kwargs: Any) -> str:
        return instance_id or str(uuid4())

    async def generate_response(self, instance_id: str, messages: List[Dict[str, Any]],
                                **kwargs: Any) -> Tuple[bool, str, float, Dict[str, Any]]:
        raise NotImplementedError

    async def calculate_score(self) -> float:
        raise NotImplementedError

    async def finalize_interaction(self) -> None:
        raise NotImplementedError
