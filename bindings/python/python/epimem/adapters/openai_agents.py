"""epimem for the OpenAI Agents SDK (``openai-agents``): a ``Session`` kept in epimem, and a
model-input filter that tells the agent what memory holds.

    session = EpimemSession(memory, "s1", user="maya")
    await Runner.run(agent, "…", session=session,
                     run_config=RunConfig(call_model_input_filter=session.input_filter))

- The session's items are the conversation's messages: each item is remembered with its
  text as the message's content (a tool call as ``name(arguments)``, its output as text) and
  the item itself in the message's metadata, so ``get_items`` hands the SDK back exactly what
  it added, in order. Messages remembered in the conversation by other doors come back as
  plain ``{"role", "content"}`` items (tool messages, which carry no call id, are left out).
- ``pop_item`` takes back the newest item while no episode holds it; once the conversation
  was closed into an episode it raises ``epimem.Conflict`` (the SDK's retries then keep it).
- ``clear_session`` forgets the conversation.
- ``input_filter`` recalls with the user's last message before each model call and adds
  what bears on it to the agent's instructions (nothing when nothing does, and nothing of
  this session, which the model is sent already).
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Dict, List, Optional

from agents.run_config import CallModelData, ModelInputData

from ..errors import NotFound
from ._common import BUDGET, HEADING, AnyMemory, acall, told

# The metadata key that holds the SDK's item whole.
ITEM = "openai_agents_item"
# The most messages one read asks for.
PAGE = 1000


class EpimemSession:
    """The SDK's ``Session`` protocol, kept in one epimem conversation (``session_id``)."""

    session_settings = None

    def __init__(
        self,
        memory: AnyMemory,
        session_id: str,
        *,
        user: Optional[str] = None,
        budget: int = BUDGET,
        heading: str = HEADING,
    ) -> None:
        if not session_id:
            raise ValueError("EpimemSession needs a session_id (its conversation)")
        self.memory = memory
        self.session_id = session_id
        self.user = user
        self.budget = budget
        self.heading = heading

    async def get_items(self, limit: Optional[int] = None) -> List[Dict[str, Any]]:
        messages: List[Any] = []
        before = None
        while limit is None or len(messages) < limit:
            want = PAGE if limit is None else min(PAGE, limit - len(messages))
            try:
                page = await acall(self.memory, "messages", self.session_id, limit=want, before=before)
            except NotFound:
                return []
            messages = list(page.messages) + messages
            if page.next_before is None:
                break
            before = page.next_before
        items = [item for item in map(_item_of, messages) if item is not None]
        return items if limit is None else items[-limit:]

    async def add_items(self, items: List[Dict[str, Any]]) -> None:
        messages = [self._message(item) for item in items]
        if messages:
            await acall(self.memory, "remember", messages)

    async def pop_item(self) -> Optional[Dict[str, Any]]:
        try:
            taken = await acall(self.memory, "take_back", self.session_id)
        except NotFound:
            return None
        return _item_of(taken)

    async def clear_session(self) -> None:
        try:
            await acall(self.memory, "forget", conversation=self.session_id)
        except NotFound:
            pass

    async def input_filter(self, data: CallModelData[Any]) -> ModelInputData:
        """For ``RunConfig(call_model_input_filter=...)``: the model's instructions gain what
        memory holds that bears on the user's last message."""
        said = next((_text(item) for item in reversed(data.model_data.input)
                     if _role(item) == "user"), "").strip()
        if not said:
            return data.model_data
        recalled = await acall(self.memory, "recall", said, budget=self.budget, user=self.user,
                               asked_in=self.session_id)
        block = told(recalled, self.heading)
        if block is None:
            return data.model_data
        before = data.model_data.instructions
        instructions = f"{before}\n\n{block}" if before else block
        return ModelInputData(input=data.model_data.input, instructions=instructions)

    def _message(self, item: Dict[str, Any]) -> Dict[str, Any]:
        item = _plain(item)
        message: Dict[str, Any] = {
            "conversation": self.session_id,
            "role": _role(item),
            "content": _text(item) or f"[{item.get('type', 'item')}]",
            "id": f"agents-{uuid.uuid4().hex}",
            "metadata": {ITEM: item},
        }
        if self.user is not None:
            message["user"] = self.user
        return message


def _plain(item: Any) -> Dict[str, Any]:
    """An item as JSON: the SDK hands dicts, and sometimes pydantic models."""
    if hasattr(item, "model_dump"):
        return item.model_dump(exclude_unset=True, mode="json")
    return json.loads(json.dumps(item, default=str))


def _role(item: Dict[str, Any]) -> str:
    """The epimem role of an item: its own for a message, ``tool`` for anything else."""
    role = item.get("role")
    if role in ("user", "assistant", "system"):
        return role
    if role == "developer":
        return "system"
    return "tool"


def _text(item: Dict[str, Any]) -> str:
    """What an item says: a message's text, a tool call as ``name(arguments)``, a tool's output."""
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text") or part.get("refusal") or ""
                         for part in content if isinstance(part, dict)).strip()
    kind = item.get("type")
    if kind == "function_call":
        return f"{item.get('name', '')}({item.get('arguments', '')})"
    if kind == "function_call_output":
        output = item.get("output")
        return output if isinstance(output, str) else json.dumps(output)
    return ""


def _item_of(message: Any) -> Optional[Dict[str, Any]]:
    """The item a message was remembered from, or a plain message item for one that was not."""
    item = (message.metadata or {}).get(ITEM)
    if isinstance(item, dict):
        return item
    if message.role in ("user", "assistant", "system"):
        return {"role": message.role, "content": message.content}
    return None
