"""epimem for AutoGen (``autogen-core`` 0.7): its ``Memory`` protocol.

    agent = AssistantAgent("assistant", model_client,
                           memory=[EpimemMemory(memory, conversation="c1", user="maya")])

- ``update_context`` (called by the agent before each model call) recalls with the user's
  last message and, when something bears on it, adds the block to the context as a system
  message (as AutoGen's own memories do); nothing is added when nothing bears on it, and
  nothing of this conversation, which the context holds already. Then it remembers the
  user's and the agent's text messages of the context.
- ``query`` answers the block of what bears on a query, this conversation included, as one
  ``MemoryContent`` (none when nothing does), with the lines it quotes in its metadata.
- ``add`` remembers a content in the conversation (text, or JSON for a mapping).
- ``clear`` forgets the conversation; ``close`` remembers the agent's last answer and closes
  the conversation's pending messages into episodes (a session's end).

AutoGen's messages carry no ids, so each is remembered under one made from its role, its
text and how many identical messages came before it in the context: a message is stored once
however often the context is read. The block is a system message after the user's, as with
every AutoGen memory: a model whose ``model_info`` says ``multiple_system_messages: False``
refuses it (AutoGen's own rule).
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple

from autogen_core import CancellationToken
from autogen_core.memory import (
    Memory,
    MemoryContent,
    MemoryMimeType,
    MemoryQueryResult,
    UpdateContextResult,
)
from autogen_core.model_context import ChatCompletionContext
from autogen_core.models import AssistantMessage, LLMMessage, SystemMessage, UserMessage

from ._common import BUDGET, HEADING, AnyMemory, acall, exchange, told, with_ids


class EpimemMemory(Memory):
    """AutoGen's ``Memory``, kept in epimem: one conversation, of one user if given."""

    def __init__(
        self,
        memory: AnyMemory,
        *,
        conversation: str,
        user: Optional[str] = None,
        budget: int = BUDGET,
        heading: str = HEADING,
    ) -> None:
        if not conversation:
            raise ValueError("EpimemMemory needs a conversation (a session, a thread)")
        self.memory = memory
        self.conversation = conversation
        self.user = user
        self.budget = budget
        self.heading = heading
        # The agent's context, read again at close for the answer no later turn brought.
        self._context: Optional[ChatCompletionContext] = None

    async def update_context(self, model_context: ChatCompletionContext) -> UpdateContextResult:
        self._context = model_context
        said = _said(await model_context.get_messages())
        asked = next((text for role, text, _ in reversed(said) if role == "user"), "")
        block = None
        if asked:
            recalled = await acall(self.memory, "recall", asked, budget=self.budget, user=self.user,
                                   asked_in=self.conversation)
            block = told(recalled, self.heading)
        await self._remember(said)
        if block is None:
            return UpdateContextResult(memories=MemoryQueryResult(results=[]))
        await model_context.add_message(SystemMessage(content=block))
        return UpdateContextResult(memories=_block(recalled))

    async def query(
        self,
        query: str | MemoryContent,
        cancellation_token: Optional[CancellationToken] = None,
        **kwargs: Any,
    ) -> MemoryQueryResult:
        text = query if isinstance(query, str) else _text(query.content)
        recalled = await acall(self.memory, "recall", text, budget=self.budget, user=self.user)
        return _block(recalled)

    async def add(self, content: MemoryContent, cancellation_token: Optional[CancellationToken] = None) -> None:
        role = (content.metadata or {}).get("role", "user")
        message: Dict[str, Any] = {"conversation": self.conversation, "role": role,
                                   "content": _text(content.content)}
        if self.user is not None:
            message["user"] = self.user
        if content.metadata:
            message["metadata"] = content.metadata
        await acall(self.memory, "remember", message)

    async def clear(self) -> None:
        await acall(self.memory, "forget", conversation=self.conversation)

    async def close(self) -> None:
        if self._context is not None:
            await self._remember(_said(await self._context.get_messages()))
        await acall(self.memory, "flush", self.conversation)

    async def _remember(self, said: List[Tuple[str, str, Optional[str]]]) -> None:
        messages = exchange(said, self.conversation, self.user)
        if messages:
            await acall(self.memory, "remember", messages)


def _said(messages: List[LLMMessage]) -> List[Tuple[str, str, Optional[str]]]:
    """The user's and the agent's text messages, each with an id made from what it says."""
    said = []
    for message in messages:
        if isinstance(message, UserMessage):
            said.append(("user", _text(message.content)))
        elif isinstance(message, AssistantMessage) and isinstance(message.content, str):
            said.append(("assistant", message.content))
    return with_ids(said, "autogen")


def _text(content: Any) -> str:
    """A content as text: a string as is, a mapping as JSON, the strings of a list joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return json.dumps(content, ensure_ascii=False, sort_keys=True)
    if isinstance(content, list):
        return "\n".join(part for part in content if isinstance(part, str))
    raise TypeError(f"epimem remembers text and JSON, not {type(content).__name__}")


def _block(recalled: Any) -> MemoryQueryResult:
    """A recall's block as one content (what bears on the query, budget-fitted), with the
    lines it quotes; no content when nothing bears on the query."""
    block = (recalled.context or "").strip()
    if not block:
        return MemoryQueryResult(results=[])
    turns = [{"episode": turn.episode, "seq": turn.seq} for turn in recalled.turns or []]
    content = MemoryContent(content=block, mime_type=MemoryMimeType.MARKDOWN,
                            metadata={"tokens": recalled.tokens, "turns": turns})
    return MemoryQueryResult(results=[content])
