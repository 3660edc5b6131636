"""epimem for LangGraph (``langgraph`` 1.x): a ``BaseStore`` for its long-term memory.

    store = EpimemStore(memory, user=lambda namespace: namespace[-1])
    agent = create_agent(model, tools, store=store)
    store.put(("memories", "maya"), "home", {"text": "Maya lives in Porto."})
    store.search(("memories", "maya"), query="where does Maya live?")

How LangGraph's store maps onto a memory of conversations:

- A namespace is a conversation, its labels joined by dots (``("memories", "maya")`` is
  ``memories.maya``; LangGraph forbids dots in labels). Listing namespaces reads every
  conversation of the tenant this way, chats included.
- ``put`` remembers the value as a message of that conversation: its text (the value's
  ``text``, ``content``, ``memory`` or ``data``, else the value as JSON) is what recall
  searches, and the value itself rides in the message's metadata. Putting a new value under
  a key adds a version; ``get`` and ``search`` answer the newest. The older values stay in
  memory as what was said then, and a recall may still quote them.
- ``search`` with a ``query`` answers the items whose lines bear on it, best first, as recall
  judges (none when nothing does); ``score`` is the item's rank (1 for the best). Without a
  query it answers the newest items. ``filter`` keeps the values whose fields are equal (or
  compare by ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``).

What does not map:

- Deleting one item (``delete``, ``put`` of ``None``): epimem forgets a whole conversation,
  episode or person, not one line of one. It raises ``NotImplementedError``; forget the
  namespace whole with ``memory.forget(conversation="memories.maya")``.
- ``index`` (which fields to embed) and time-to-live: every item is searched by its text, and
  kept until forgotten.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any, Callable, Dict, Generator, Iterable, List, Optional, Tuple, Union

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from ..errors import EpimemError, NotFound
from ._common import AnyMemory, acall, call

# The metadata key that holds an item's key and value.
ITEM = "langgraph"
# The fields of a value read as its text, first found first.
TEXT_FIELDS = ("text", "content", "memory", "data")
# The most messages or conversations one read asks for.
PAGE = 1000
# Tokens of a recall that ranks a namespace's items.
RANKING_BUDGET = 4000

Namespace = Tuple[str, ...]
# A step of an operation: the memory call it needs next, answered by the driver.
Step = Generator[Tuple[str, tuple, Dict[str, Any]], Any, Any]


class EpimemStore(BaseStore):
    """LangGraph's ``BaseStore``, kept in epimem (see the module's notes for what maps)."""

    def __init__(
        self,
        memory: AnyMemory,
        *,
        user: Union[str, Callable[[Namespace], Optional[str]], None] = None,
    ) -> None:
        self.memory = memory
        self.user = user

    def batch(self, ops: Iterable[Op]) -> List[Result]:
        return [self._drive(self._op(op)) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> List[Result]:
        return [await self._adrive(self._op(op)) for op in ops]

    # Each operation is written once, as steps: the two drivers answer them with the memory's
    # calls, one synchronously and one not.

    def _drive(self, steps: Step) -> Any:
        try:
            name, args, kwargs = next(steps)
            while True:
                try:
                    answer = call(self.memory, name, *args, **kwargs)
                except EpimemError as e:
                    name, args, kwargs = steps.throw(e)
                else:
                    name, args, kwargs = steps.send(answer)
        except StopIteration as done:
            return done.value

    async def _adrive(self, steps: Step) -> Any:
        try:
            name, args, kwargs = next(steps)
            while True:
                try:
                    answer = await acall(self.memory, name, *args, **kwargs)
                except EpimemError as e:
                    name, args, kwargs = steps.throw(e)
                else:
                    name, args, kwargs = steps.send(answer)
        except StopIteration as done:
            return done.value

    def _op(self, op: Op) -> Step:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            return self._put(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise ValueError(f"EpimemStore does not know the operation {type(op).__name__}")

    def _get(self, op: GetOp) -> Step:
        items, _ = yield from _items(op.namespace)
        return items.get(op.key)

    def _put(self, op: PutOp) -> Step:
        if op.value is None:
            raise NotImplementedError(
                f"epimem does not delete one item (key {op.key!r} of {op.namespace}): it forgets "
                f"a whole conversation; forget this namespace with "
                f"memory.forget(conversation={_conversation(op.namespace)!r})")
        value = dict(op.value)
        encoded = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
        digest = hashlib.sha256(f"{op.key}\0{encoded}".encode()).hexdigest()[:24]
        message: Dict[str, Any] = {
            "conversation": _conversation(op.namespace),
            "role": "user",
            "content": _text(value),
            # The same value put again is stored once; a new one is a new version.
            "id": f"langgraph-{digest}",
            "metadata": {ITEM: {"key": op.key, "value": json.loads(encoded)}},
        }
        user = self.user(op.namespace) if callable(self.user) else self.user
        if user is not None:
            message["user"] = user
        yield ("remember", (message,), {})
        return None

    def _search(self, op: SearchOp) -> Step:
        found: List[SearchItem] = []
        for namespace in (yield from self._namespaces(op.namespace_prefix)):
            items, keys = yield from _items(namespace)
            kept = {k: i for k, i in items.items() if _matches(i.value, op.filter or {})}
            if op.query:
                ranked = yield from _ranked(namespace, op.query, kept, keys)
            else:
                newest = sorted(kept.values(), key=lambda i: i.updated_at, reverse=True)
                ranked = [(item, None) for item in newest]
            found.extend(SearchItem(namespace=i.namespace, key=i.key, value=i.value,
                                    created_at=i.created_at, updated_at=i.updated_at, score=s)
                         for i, s in ranked)
        if op.query:
            found.sort(key=lambda i: -(i.score or 0.0))
        return found[op.offset:op.offset + op.limit]

    def _list_namespaces(self, op: ListNamespacesOp) -> Step:
        prefix: Namespace = ()
        for condition in op.match_conditions or ():
            if condition.match_type == "prefix":
                prefix = tuple(condition.path[:next((i for i, p in enumerate(condition.path)
                                                     if p == "*"), len(condition.path))])
        namespaces = set()
        for namespace in (yield from self._namespaces(prefix)):
            if all(_does_match(c.match_type, tuple(c.path), namespace)
                   for c in op.match_conditions or ()):
                namespaces.add(namespace[:op.max_depth] if op.max_depth else namespace)
        return sorted(namespaces)[op.offset:op.offset + op.limit]

    def _namespaces(self, prefix: Namespace) -> Step:
        """The namespaces at or under ``prefix``, read from the tenant's conversation names."""
        joined = _conversation(prefix)
        names: List[str] = []
        after = None
        while True:
            page = yield ("conversations", (), {"prefix": joined, "after": after, "limit": PAGE})
            names.extend(page.conversations)
            if page.next_after is None:
                break
            after = page.next_after
        return [tuple(name.split(".")) for name in names
                if not joined or name == joined or name.startswith(joined + ".")]


def _conversation(namespace: Namespace) -> str:
    return ".".join(namespace)


def _items(namespace: Namespace) -> Step:
    """The newest version of each item of ``namespace`` by key, and the key of each message
    that holds a version of one, by sequence number."""
    messages: List[Any] = []
    before = None
    while True:
        try:
            page = yield ("messages", (_conversation(namespace),), {"limit": PAGE, "before": before})
        except NotFound:
            return {}, {}
        messages = list(page.messages) + messages
        if page.next_before is None:
            break
        before = page.next_before
    items: Dict[str, Item] = {}
    keys: Dict[int, str] = {}
    for message in messages:
        held = (message.metadata or {}).get(ITEM)
        if not isinstance(held, dict) or "key" not in held:
            continue
        key, at = held["key"], _time(message.timestamp)
        first = items.get(key)
        items[key] = Item(value=held.get("value", {}), key=key, namespace=namespace,
                          created_at=first.created_at if first else at, updated_at=at)
        keys[message.seq] = key
    return items, keys


def _ranked(namespace: Namespace, query: str, items: Dict[str, Item], keys: Dict[int, str]) -> Step:
    """The items recall quotes a version of for ``query``, best first (an item stands where
    its best version does), with a score from their rank."""
    recalled = yield ("recall", (query,), {"budget": RANKING_BUDGET,
                                           "conversation": _conversation(namespace)})
    ranked: List[Item] = []
    for turn in recalled.turns or []:
        item = items.get(keys.get(turn.seq, ""))
        if item is not None and item not in ranked:
            ranked.append(item)
    return [(item, 1.0 - i / len(ranked)) for i, item in enumerate(ranked)]


def _text(value: Dict[str, Any]) -> str:
    """What recall searches of a value: its text field, else the value as JSON."""
    for field in TEXT_FIELDS:
        if isinstance(value.get(field), str) and value[field].strip():
            return value[field]
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _time(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _matches(value: Any, wanted: Dict[str, Any]) -> bool:
    """Whether ``value`` holds every field of ``wanted``, equal or as its operators compare."""
    if not isinstance(value, dict):
        return False
    for field, want in wanted.items():
        have = value.get(field)
        if isinstance(want, dict) and want and all(k.startswith("$") for k in want):
            if not all(_compare(have, op, operand) for op, operand in want.items()):
                return False
        elif isinstance(want, dict):
            if not _matches(have, want):
                return False
        elif have != want:
            return False
    return True


def _compare(have: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return have == operand
    if op == "$ne":
        return have != operand
    if have is None:
        return False
    if op == "$gt":
        return have > operand
    if op == "$gte":
        return have >= operand
    if op == "$lt":
        return have < operand
    if op == "$lte":
        return have <= operand
    raise ValueError(f"filter: unknown operator {op!r} (expected $eq, $ne, $gt, $gte, $lt, $lte)")


def _does_match(kind: str, path: Namespace, namespace: Namespace) -> bool:
    """Whether ``namespace`` starts (``prefix``) or ends (``suffix``) with ``path``; ``*``
    matches any label."""
    if len(namespace) < len(path):
        return False
    pairs = zip(namespace, path) if kind == "prefix" else zip(reversed(namespace), reversed(path))
    return all(p == "*" or n == p for n, p in pairs)
