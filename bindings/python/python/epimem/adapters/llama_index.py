"""epimem for LlamaIndex (``llama-index-core`` 0.14): a memory block for its ``Memory``.

    memory = Memory.from_defaults(session_id="s1",
                                  memory_blocks=[EpimemBlock(memory=epimem_memory, user="maya")])
    await agent.run("…", memory=memory)

When the agent reads its memory, the block recalls with the user's last message and answers
what bears on it (nothing when nothing does), which LlamaIndex puts in the system message. It
then remembers the session's user and assistant messages, in the conversation named by the
session id; messages LlamaIndex flushes from its short-term memory are remembered too.

The block may quote the session's own earlier lines: LlamaIndex flushes old messages out of
the model's view into the blocks, so the session is searched whole.

LlamaIndex's messages carry no ids, so each is remembered under one made from its role, its
text and how many identical messages came before it: a message is stored once however often
the history is read.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import BaseMemoryBlock
from pydantic import Field

from ._common import BUDGET, HEADING, acall, exchange, told, with_ids


class EpimemBlock(BaseMemoryBlock[str]):
    """A memory block whose memory is epimem: one user's, if given, across their sessions."""

    name: str = Field(default="epimem", description="The block's name in the memory template.")
    memory: Any = Field(description="An epimem Memory, Client or AsyncClient.")
    user: Optional[str] = Field(default=None, description="The person whose memory it is.")
    conversation: Optional[str] = Field(
        default=None, description="The conversation to remember in (default: the session id).")
    budget: int = Field(default=BUDGET, description="Tokens the recalled block may take.")
    heading: str = Field(default=HEADING, description="How the block is put to the model.")

    async def _aget(self, messages: Optional[List[ChatMessage]] = None, **block_kwargs: Any) -> str:
        said = _said(messages or [])
        asked = next((text for role, text, _ in reversed(said) if role == "user"), "")
        block = None
        if asked:
            recalled = await acall(self.memory, "recall", asked, budget=self.budget, user=self.user)
            block = told(recalled, self.heading)
        await self._remember(said, block_kwargs.get("session_id"))
        return block or ""

    async def _aput(self, messages: List[ChatMessage]) -> None:
        session = next((m.additional_kwargs.get("session_id") for m in messages
                        if m.additional_kwargs.get("session_id")), None)
        await self._remember(_said(messages), session)

    async def _remember(self, said: List[Tuple[str, str, Optional[str]]], session: Optional[str]) -> None:
        conversation = self.conversation or session
        if not conversation:
            raise ValueError("EpimemBlock needs a conversation: give conversation= or a Memory "
                             "with a session_id")
        messages = exchange(said, conversation, self.user)
        if messages:
            await acall(self.memory, "remember", messages)


def _said(messages: List[ChatMessage]) -> List[Tuple[str, str, Optional[str]]]:
    """The user's and the assistant's text messages, each with an id made from what it says."""
    said = []
    for message in messages:
        role = getattr(message.role, "value", message.role)
        if role in ("user", "assistant") and message.content:
            said.append((role, str(message.content)))
    return with_ids(said, "llama-index")
