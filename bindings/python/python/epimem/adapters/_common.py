"""What the adapters share: calling any epimem object from synchronous or asynchronous code,
and the block the model is told."""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ..client import AsyncClient, Client
from ..memory import Memory
from ..models import RecallOut

# How a recalled block is put to the model, unless an adapter is told otherwise.
HEADING = "What you remember of earlier talks:"
# Tokens the recalled block may take, unless an adapter is told otherwise.
BUDGET = 500

AnyMemory = Union[Memory, Client, AsyncClient]


def call(memory: AnyMemory, name: str, *args: Any, **kwargs: Any) -> Any:
    """``memory.name(...)`` from synchronous code."""
    if isinstance(memory, AsyncClient):
        raise TypeError(
            f"an AsyncClient answers only asynchronous code, and the framework called {name}() "
            "synchronously: give the adapter a Memory or a Client, or use the framework's "
            "asynchronous calls")
    return getattr(memory, name)(*args, **kwargs)


async def acall(memory: AnyMemory, name: str, *args: Any, **kwargs: Any) -> Any:
    """``memory.name(...)`` from asynchronous code; a blocking object runs on a thread."""
    if isinstance(memory, AsyncClient):
        return await getattr(memory, name)(*args, **kwargs)
    return await asyncio.to_thread(getattr(memory, name), *args, **kwargs)


def told(recalled: RecallOut, heading: str) -> Optional[str]:
    """What the model is told of ``recalled``: nothing when nothing bears on the query."""
    block = (recalled.context or "").strip()
    return f"{heading}\n{block}" if block else None


def exchange(
    said: Sequence[Tuple[str, str, Optional[str]]], conversation: str, user: Optional[str]
) -> List[Dict[str, Any]]:
    """Messages to remember, from (role, text, id) triples; empty texts are left out."""
    messages = []
    for role, text, id in said:
        if not text.strip():
            continue
        message: Dict[str, Any] = {"conversation": conversation, "role": role, "content": text}
        if user is not None:
            message["user"] = user
        if id is not None:
            message["id"] = id
        messages.append(message)
    return messages


def with_ids(said: Sequence[Tuple[str, str]], prefix: str) -> List[Tuple[str, str, Optional[str]]]:
    """Ids for messages a framework keeps without any: each made from the message's role, its
    text and how many identical messages came before it, so reading the same history again
    stores nothing twice."""
    seen: Counter = Counter()
    out: List[Tuple[str, str, Optional[str]]] = []
    for role, text in said:
        digest = hashlib.sha256(f"{role}\0{text}".encode()).hexdigest()[:24]
        seen[digest] += 1
        out.append((role, text, f"{prefix}-{digest}-{seen[digest]}"))
    return out
