"""The calls every epimem object answers, written once: ``Memory`` (the engine in this
process), ``Client`` and ``AsyncClient`` (a running ``epimem serve``) differ only in how they
send a call. A call is an operation of the HTTP API (its ``operationId``) with its request as
HTTP would carry it; each answer is the API's JSON read into the type the OpenAPI document
gives it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Generic, Mapping, Optional, Sequence, Type, TypeVar, Union
from urllib.parse import quote

from pydantic import BaseModel

from . import models

T = TypeVar("T", bound=BaseModel)

MessageLike = Union[models.MessageIn, Mapping[str, Any]]


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request: ``operation`` by its ``operationId``, and how HTTP carries it."""

    operation: str
    method: str
    path: str
    answer: Type[T]
    path_params: Dict[str, str] = field(default_factory=dict)
    query: Dict[str, Any] = field(default_factory=dict)
    body: Any = None

    def url(self) -> str:
        """The path with its parameters filled in, each quoted whole."""
        return self.path.format(**{k: quote(v, safe="") for k, v in self.path_params.items()})

    def request(self) -> Dict[str, Any]:
        """The request as the embedded engine takes it."""
        return {"path": self.path_params, "query": self.query, "body": self.body}


def _present(**fields: Any) -> Dict[str, Any]:
    """The fields that were given (``None`` means not given)."""
    return {k: v for k, v in fields.items() if v is not None}


def _time(value: Any) -> Optional[str]:
    """A time as RFC 3339: a ``datetime`` (naive ones are read as UTC) or a string as given."""
    if value is None or isinstance(value, str):
        return value
    if getattr(value, "tzinfo", True) is None:
        from datetime import timezone

        value = value.replace(tzinfo=timezone.utc)
    return value.isoformat()


def _message(message: MessageLike) -> Dict[str, Any]:
    if isinstance(message, BaseModel):
        return message.model_dump(exclude_none=True, mode="json")
    out = {k: v for k, v in dict(message).items() if v is not None}
    if "timestamp" in out:
        out["timestamp"] = _time(out["timestamp"])
    return out


class Operations:
    """What every epimem object answers. Subclasses define ``_send``."""

    def _send(self, call: Call[T]) -> T:  # pragma: no cover - defined by each transport
        raise NotImplementedError

    # Remembering.

    def remember(
        self,
        messages: Union[MessageLike, Sequence[MessageLike], None] = None,
        *,
        conversation: Optional[str] = None,
        role: Optional[str] = None,
        content: Optional[str] = None,
        id: Optional[str] = None,
        user: Optional[str] = None,
        project: Optional[str] = None,
        speaker: Optional[str] = None,
        timestamp: Any = None,
        metadata: Optional[Mapping[str, Any]] = None,
    ) -> models.AddedOut:
        """Stores messages: one (its fields as keywords, or a mapping), or a list of them.

        A message sent again with the same ``id`` in its conversation is stored once. They are
        searchable at once; the background worker cuts them into episodes."""
        if messages is None:
            if conversation is None or role is None or content is None:
                raise TypeError("remember() needs messages, or conversation, role and content")
            one = _present(conversation=conversation, role=role, content=content, id=id,
                           user=user, project=project, speaker=speaker,
                           timestamp=_time(timestamp), metadata=metadata)
            body: Any = one
        elif isinstance(messages, (BaseModel, Mapping)):
            body = _message(messages)
        else:
            body = [_message(m) for m in messages]
        return self._send(Call("add_messages", "POST", "/v1/messages", models.AddedOut, body=body))

    def flush(self, conversation: Optional[str] = None) -> models.FlushedOut:
        """Closes what is pending into episodes now: in ``conversation`` (a session's end), or
        in every conversation of the tenant (an import's end)."""
        if conversation is None:
            return self._send(Call("flush_tenant", "POST", "/v1/flush", models.FlushedOut))
        return self._send(Call("flush_conversation", "POST", "/v1/conversations/{conversation}/flush",
                               models.FlushedOut, {"conversation": conversation}))

    def conversation(self, conversation: str) -> models.ConversationOut:
        """A conversation's state: messages, what is pending, its episodes and jobs."""
        return self._send(Call("get_conversation", "GET", "/v1/conversations/{conversation}",
                               models.ConversationOut, {"conversation": conversation}))

    def conversations(
        self, *, prefix: Optional[str] = None, after: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> models.ConversationsOut:
        """The tenant's conversations by name, in name order: those starting with ``prefix``,
        at most ``limit`` (default 100); pass ``next_after`` back as ``after`` for more."""
        query = _present(prefix=prefix, after=after, limit=limit)
        return self._send(Call("list_conversations", "GET", "/v1/conversations",
                               models.ConversationsOut, query=query))

    def messages(
        self, conversation: str, *, limit: Optional[int] = None, before: Optional[int] = None
    ) -> models.MessagesOut:
        """A conversation's messages as it holds them, oldest first: the newest ``limit``
        (default 100) of those before ``before``, each with its metadata and the episode it
        closed into; pass ``next_before`` back as ``before`` for older ones."""
        query = _present(limit=limit, before=before)
        return self._send(Call("list_messages", "GET", "/v1/conversations/{conversation}/messages",
                               models.MessagesOut, {"conversation": conversation}, query=query))

    def take_back(self, conversation: str) -> models.StoredMessageOut:
        """Takes back the conversation's newest message while it is in no episode (an agent
        undoing its last turn): it is gone, and its id may be sent again. ``Conflict`` once an
        episode holds it; ``NotFound`` when the conversation holds no message."""
        return self._send(Call("take_back_message", "DELETE",
                               "/v1/conversations/{conversation}/messages/newest",
                               models.StoredMessageOut, {"conversation": conversation}))

    # Recalling.

    def recall(
        self,
        query: str,
        *,
        budget: Optional[int] = None,
        limit: Optional[int] = None,
        conversation: Optional[str] = None,
        user: Optional[str] = None,
        project: Optional[str] = None,
        since: Any = None,
        until: Any = None,
        within: Optional[str] = None,
        episodes: bool = False,
        fill: bool = False,
        min_relevance: Optional[float] = None,
        asked_in: Optional[str] = None,
    ) -> models.RecallOut:
        """What the memory holds about ``query``.

        Without ``budget``: the best episodes (``hits``). With one: a context block of at most
        that many tokens (``context``), holding only lines that bear on the query, and empty
        (``nothing_relevant``) when nothing does. Scope it by ``conversation``, ``user``,
        ``project``, time (``since``/``until``) or a timeline period (``within``). With
        ``asked_in``, the conversation the caller's context holds already (an agent's session):
        the block leaves its messages out, and the episodes it quotes are strengthened when
        that conversation goes on to use them."""
        body = _present(query=query, budget=budget, limit=limit, conversation=conversation,
                        user=user, project=project, since=_time(since), until=_time(until),
                        within=within, min_relevance=min_relevance, asked_in=asked_in)
        if episodes:
            body["episodes"] = True
        if fill:
            body["fill"] = True
        return self._send(Call("recall", "POST", "/v1/recall", models.RecallOut, body=body))

    def next_turn(
        self,
        conversation: str,
        *,
        query: Optional[str] = None,
        budget: Optional[int] = None,
        recent_share: Optional[float] = None,
        summary_share: Optional[float] = None,
    ) -> models.NextTurnOut:
        """One block for a model's next turn in ``conversation``: the newest messages, the
        earlier episodes told short, and what long-term memory holds about ``query``."""
        body = _present(query=query, budget=budget, recent_share=recent_share,
                        summary_share=summary_share)
        return self._send(Call("next_turn", "POST", "/v1/conversations/{conversation}/next-turn",
                               models.NextTurnOut, {"conversation": conversation}, body=body))

    def project_memory(
        self, project: str, *, prompt: Optional[str] = None, session: Optional[str] = None
    ) -> models.ProjectMemoryOut:
        """What a coding agent starting work in ``project`` (its repository's root folder) is
        told of earlier sessions; with ``prompt``, the earlier work that bears on it."""
        body = _present(project=project, prompt=prompt, session=session)
        return self._send(Call("project_memory", "POST", "/v1/project-memory",
                               models.ProjectMemoryOut, body=body))

    # Episodes.

    def episodes(
        self,
        *,
        conversation: Optional[str] = None,
        user: Optional[str] = None,
        project: Optional[str] = None,
        since: Any = None,
        until: Any = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> models.EpisodesOut:
        """A page of episodes, newest first; pass ``next_cursor`` back as ``cursor``."""
        query = _present(conversation=conversation, user=user, project=project,
                         since=_time(since), until=_time(until), limit=limit, cursor=cursor)
        return self._send(Call("list_episodes", "GET", "/v1/episodes", models.EpisodesOut,
                               query=query))

    def episode(self, id: str) -> models.EpisodeOut:
        """One episode with its messages, memory strength and versions."""
        return self._send(Call("get_episode", "GET", "/v1/episodes/{id}", models.EpisodeOut,
                               {"id": id}))

    def correct(
        self, id: str, *, title: Optional[str] = None, summary: Optional[str] = None
    ) -> models.EpisodeOut:
        """Corrects an episode's title or summary; the version before is kept."""
        body = _present(title=title, summary=summary)
        return self._send(Call("edit_episode", "PATCH", "/v1/episodes/{id}", models.EpisodeOut,
                               {"id": id}, body=body))

    def versions(self, id: str) -> models.EpisodeVersionsOut:
        """Every version of an episode's title and summary, oldest first."""
        return self._send(Call("episode_versions", "GET", "/v1/episodes/{id}/versions",
                               models.EpisodeVersionsOut, {"id": id}))

    # Forgetting.

    def forget(
        self,
        *,
        episode: Optional[str] = None,
        conversation: Optional[str] = None,
        user: Optional[str] = None,
        tenant: bool = False,
    ) -> models.DeletedOut:
        """Forgets one thing, from every file and index: an ``episode``, a ``conversation``, a
        ``user`` (every conversation of that person) or, with ``tenant=True``, everything."""
        named = [k for k, v in (("episode", episode), ("conversation", conversation),
                                ("user", user)) if v is not None] + (["tenant"] if tenant else [])
        if len(named) != 1:
            raise TypeError("forget() takes exactly one of episode, conversation, user, tenant=True")
        if episode is not None:
            call = Call("delete_episode", "DELETE", "/v1/episodes/{id}", models.DeletedOut,
                        {"id": episode})
        elif conversation is not None:
            call = Call("delete_conversation", "DELETE", "/v1/conversations/{conversation}",
                        models.DeletedOut, {"conversation": conversation})
        elif user is not None:
            call = Call("delete_user", "DELETE", "/v1/users/{user}", models.DeletedOut,
                        {"user": user})
        else:
            call = Call("delete_tenant", "DELETE", "/v1/tenant", models.DeletedOut)
        return self._send(call)

    # What the memory made of it.

    def timeline(self, *, user: Optional[str] = None) -> models.TimelineOut:
        """The top of the timeline: the periods rolled up, oldest first."""
        return self._send(Call("timeline_top", "GET", "/v1/timeline", models.TimelineOut,
                               query=_present(user=user)))

    def timeline_node(
        self, node: str, *, version: Optional[int] = None, user: Optional[str] = None
    ) -> models.TimelineNodeOut:
        """One period of the timeline (``2024``, ``2024-05``, ``2024-W18``, ``2024-05-02``)."""
        return self._send(Call("timeline_node", "GET", "/v1/timeline/{node}",
                               models.TimelineNodeOut, {"node": node},
                               query=_present(version=version, user=user)))

    def facts(
        self,
        *,
        conversation: Optional[str] = None,
        user: Optional[str] = None,
        all: bool = False,
        limit: Optional[int] = None,
    ) -> models.FactsOut:
        """Lasting facts distilled from episodes (by a language model, when one is set)."""
        query = _present(conversation=conversation, user=user, limit=limit)
        if all:
            query["all"] = True
        return self._send(Call("list_facts", "GET", "/v1/facts", models.FactsOut, query=query))

    def jobs(self, *, conversation: Optional[str] = None, limit: Optional[int] = None) -> models.JobsOut:
        """The background jobs of the tenant (or of one conversation), newest first."""
        return self._send(Call("list_jobs", "GET", "/v1/jobs", models.JobsOut,
                               query=_present(conversation=conversation, limit=limit)))

    def stats(self) -> models.StatsOut:
        """Counts of what the tenant holds, and what its language model calls cost."""
        return self._send(Call("get_stats", "GET", "/v1/stats", models.StatsOut))
