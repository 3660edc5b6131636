"""The API's request and answer types, generated from its OpenAPI document by
generate-models.sh: do not edit."""

from __future__ import annotations

from enum import Enum
from typing import Any, Dict, List, Optional

from pydantic import BaseModel, ConfigDict, conint


class AddedStatus(Enum):
    """
    What became of one sent message.
    """

    stored = "stored"
    duplicate = "duplicate"
    conflict = "conflict"


class ConversationsOut(BaseModel):
    """
    The tenant's conversations by name, in name order.
    """

    conversations: List[str]
    next_after: Optional[str] = None
    """
    More remain: ask again with this as `after`.
    """


class CurvePointOut(BaseModel):
    """
    A point of a forgetting curve.
    """

    at: str
    retrievability: float


class DeletedOut(BaseModel):
    """
    What a deletion removed.
    """

    episodes: conint(ge=0)
    """
    Episodes deleted.
    """


class EpisodeEditIn(BaseModel):
    """
    What to change; what is left out stays.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    summary: Optional[str] = None
    """
    The new summary.
    """
    title: Optional[str] = None
    """
    The new title (not empty).
    """


class EpisodeVersionOut(BaseModel):
    """
    What an episode said before an edit.
    """

    replaced_at: str
    """
    When an edit replaced it (RFC 3339).
    """
    summary: str
    title: str
    version: conint(ge=0)
    """
    1 for the text it was told with, one more per edit.
    """


class EpisodeVersionsOut(BaseModel):
    """
    `GET /v1/episodes/{id}/versions`.
    """

    versions: List[EpisodeVersionOut]
    """
    Oldest first; empty if it was never edited.
    """


class ErrorDetail(BaseModel):
    code: str
    """
    Stable and machine-readable: `bad_input`, `unauthorized`, `forbidden`, `not_found`,
    `method_not_allowed`, `timeout`, `conflict`, `payload_too_large`, `uri_too_long`,
    `unsupported_media_type`, `unavailable`, `internal`.
    """
    message: str
    """
    For people: names the field or the thing that was wrong.
    """


class FactOut(BaseModel):
    """
    A lasting fact distilled from episodes by the language model.
    """

    conversation: str
    id: str
    invalid_at: Optional[str] = None
    """
    When a later episode said otherwise; absent while it holds.
    """
    reinforced: conint(ge=0)
    """
    How often later episodes confirmed it.
    """
    score: Optional[float] = None
    """
    How well it matched the query (recall only).
    """
    sources: List[str]
    """
    The episodes it came from or that confirmed it.
    """
    text: str
    """
    One sentence.
    """
    valid_at: str
    """
    When it became true (conversation time, RFC 3339).
    """


class FactsOut(BaseModel):
    facts: List[FactOut]


class FlushedOut(BaseModel):
    """
    What a flush closed.
    """

    episodes_closed: conint(ge=0)
    messages_closed: conint(ge=0)


class JobStateOut(Enum):
    """
    Where a job stands.
    """

    queued = "queued"
    running = "running"
    retrying = "retrying"
    parked = "parked"


class LlmUsageOut(BaseModel):
    """
    What calls to a language model cost: every HTTP request counts, retried ones included.
    """

    calls: conint(ge=0)
    completion_tokens: conint(ge=0)
    failures: conint(ge=0)
    """
    Calls that got no usable reply.
    """
    latency_ms: conint(ge=0)
    """
    Time spent waiting for replies, all calls together.
    """
    prompt_tokens: conint(ge=0)


class MessageIn(BaseModel):
    """
    One message to remember: the fields of a line of `epimem ingest`.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    content: str
    conversation: str
    """
    The conversation it belongs to; created on first use.
    """
    id: Optional[str] = None
    """
    Idempotency key, unique within the conversation: a message sent again with the same
    id is stored once. Without one every request stores a new message.
    """
    metadata: Optional[Dict[str, Any]] = None
    """
    Any JSON object, kept with the message.
    """
    project: Optional[str] = None
    """
    The project a coding agent works in (its repository's root folder). Also read as
    `agent`.
    """
    role: str
    """
    `user`, `assistant`, `system` or `tool`.
    """
    speaker: Optional[str] = None
    """
    Who spoke, when the role is not enough ("Caroline").
    """
    timestamp: Optional[str] = None
    """
    RFC 3339; the server's clock when absent. One before the newest message of its
    conversation is stored at that newest time (a conversation's time only moves forward),
    the time it was sent with kept as `given_timestamp` in its metadata.
    """
    user: Optional[str] = None
    """
    The person the conversation is with: recall, episodes, facts and the timeline can be
    asked for one person, and a person forgotten (`DELETE /v1/users/{user}`).
    """


class MessageOut(BaseModel):
    content: str
    context: bool
    """
    Carried in from the previous episode for context.
    """
    id: Optional[str] = None
    """
    The id the message was sent with (none when it was sent without one).
    """
    role: str
    seq: conint(ge=0)
    speaker: Optional[str] = None
    timestamp: str


class NameReadOut(BaseModel):
    """
    A word of the query read as a name the memory holds.
    """

    read_as: str
    """
    The name it was read as.
    """
    written: str
    """
    As the query wrote it.
    """


class NextTurnIn(BaseModel):
    """
    `POST /v1/conversations/{conversation}/next-turn`.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    budget: Optional[conint(ge=0)] = None
    """
    Tokens the whole block may take (default 2,000).
    """
    query: Optional[str] = None
    """
    What to look up in long-term memory; the newest message a person wrote when absent.
    """
    recent_share: Optional[float] = None
    """
    The share of the budget for the newest messages, verbatim (default
    `next_turn.recent_share`, 0.4).
    """
    summary_share: Optional[float] = None
    """
    The share for what came before them, told short (default `next_turn.summary_share`,
    0.2). The long-term lines take the rest, and whatever the other two leave.
    """


class ProjectMemoryIn(BaseModel):
    """
    `POST /v1/project-memory`.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    project: str
    """
    The project: the root folder of its repository, as the sessions recorded it (their
    messages' `agent`).
    """
    prompt: Optional[str] = None
    """
    The request about to be worked on: only earlier work that bears on it is told (chosen
    by recall, words and meaning agreeing). Without it, what a new session is told.
    """
    session: Optional[str] = None
    """
    The session the prompt is sent in (its conversation): its own work is not told back.
    """
    tenant: Optional[str] = None
    """
    The tenant the caller stores its sessions in, if it has one (a hook does). A request
    that works in another (its key's, or the server's own) is refused with `conflict`
    rather than told another tenant's work.
    """


class ProjectMemoryOut(BaseModel):
    context: str
    """
    The block to hand the agent; empty when nothing bears on it.
    """


class RecallIn(BaseModel):
    """
    A recall: what to look for, where, and in what form.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    asked_in: Optional[str] = None
    """
    The conversation the recall is made for, which the caller's context holds already (an
    agent's session): a context block leaves its messages out, and the episodes it quotes
    are strengthened when that conversation goes on to use them.
    """
    budget: Optional[conint(ge=0)] = None
    """
    Answer with a context block of at most this many tokens instead of hits: the lines
    that best answer the query, grouped by episode.
    """
    conversation: Optional[str] = None
    """
    Only this conversation.
    """
    episodes: Optional[bool] = None
    """
    With `budget`: whole episodes (title, time, summary, matching lines), not single lines.
    """
    fill: Optional[bool] = None
    """
    With `budget`: fill it with the best lines whether or not they bear on the query (the
    behaviour before relevance was judged). By default a block holds only lines that do,
    stops where they score well below the best, and is empty when nothing does.
    """
    limit: Optional[conint(ge=0)] = None
    """
    At most this many episodes (default 5, at most 1000).
    """
    min_relevance: Optional[float] = None
    """
    With `budget`: the relevance (0 to 1: the probability that a line bears on the query)
    a line must reach for the block to speak (default `relevance.speak`); lower keeps more,
    higher leaves more empty.
    """
    project: Optional[str] = None
    """
    Only the sessions of this project: a coding agent's, named by its repository's root
    folder as `epimem hook` records it (the messages' `agent`). Also read as `agent`.
    """
    query: str
    """
    What to look for, in plain words.
    """
    since: Optional[str] = None
    """
    Only episodes that end at or after this time (RFC 3339). Also read as `from`.
    """
    until: Optional[str] = None
    """
    Only episodes that start at or before this time (RFC 3339). Also read as `to`.
    """
    user: Optional[str] = None
    """
    Only what this person said: the conversations whose messages carry this `user`.
    """
    within: Optional[str] = None
    """
    Only episodes of this period: a timeline node id (`toc:week:2026:W09`) or a phrase
    ("last week", "in March") read against the conversation's time; not with from/to.
    """


class RecentOut(BaseModel):
    """
    The conversation's newest messages, verbatim, oldest first.
    """

    messages: List[MessageOut]
    share: conint(ge=0)
    """
    Tokens this part could take.
    """
    tokens: conint(ge=0)


class ReviewOut(BaseModel):
    """
    The memory state a review left an episode with.
    """

    at: Optional[str] = None
    difficulty: Optional[float] = None
    due: Optional[str] = None
    stability_days: Optional[float] = None


class SessionSummaryOut(BaseModel):
    """
    A session summed up from its episodes.
    """

    bullets: List[str]
    keywords: List[str]
    messages: conint(ge=0)
    names: List[str]
    """
    People, places and named things of the session.
    """
    title: str


class SkeletonOut(BaseModel):
    """
    The skeleton of an episode of agent work, counted from its actions.
    """

    commits: List[str]
    """
    The `git commit` command lines it ran.
    """
    duration_seconds: float
    execute: conint(ge=0)
    """
    Actions that edited, wrote or ran a command.
    """
    failed: List[str]
    """
    What failed (commands, searches or files), each once.
    """
    failures: conint(ge=0)
    first_prompt: Optional[conint(ge=0)] = None
    hot_files: List[str]
    """
    The files touched most, most first.
    """
    investigate: conint(ge=0)
    """
    Actions that read or searched.
    """
    last_prompt: Optional[conint(ge=0)] = None
    prompts: conint(ge=0)
    """
    The user's prompts, and the first and last one's sequence numbers.
    """


class StatsOut(BaseModel):
    """
    Counts of what a tenant holds, and what calls to a language model cost it per stage.
    """

    conversations: conint(ge=0)
    episodes: conint(ge=0)
    failed_jobs: conint(ge=0)
    """
    Jobs given up on after their retries.
    """
    llm: Dict[str, LlmUsageOut]
    """
    By stage (`segment`, `review`, …); stages never called are left out.
    """
    messages: conint(ge=0)
    pending_messages: conint(ge=0)
    """
    Messages not yet in an episode.
    """
    queued_jobs: conint(ge=0)
    """
    Segmentation and other jobs waiting for a worker.
    """


class StoredMessageOut(BaseModel):
    """
    A message as the conversation holds it.
    """

    content: str
    episode: Optional[str] = None
    """
    The episode it closed into; absent while it is in the open tail.
    """
    id: Optional[str] = None
    """
    The id it was sent with (none when it was sent without one).
    """
    metadata: Optional[Dict[str, Any]] = None
    """
    What it was sent with (absent when nothing).
    """
    role: str
    seq: conint(ge=0)
    """
    Its sequence number in the conversation (1-based).
    """
    speaker: Optional[str] = None
    timestamp: str
    """
    Conversation time (RFC 3339).
    """


class SummaryOut(BaseModel):
    """
    What came before the newest messages, told short: its episodes' titles and summaries.
    """

    episodes: List[str]
    """
    The episodes it tells, oldest first.
    """
    share: conint(ge=0)
    text: str
    tokens: conint(ge=0)


class TimelineNodeOut(BaseModel):
    """
    A node of the timeline: a year, month, ISO week or day summed up from its children.
    """

    bullets: List[str]
    children: List[str]
    """
    Its children in time order: node ids, or a day's episode ids.
    """
    end: str
    episodes: conint(ge=0)
    id: str
    """
    `toc:year:2026`, `toc:month:2026:03`, `toc:week:2026:W09` or `toc:day:2026-03-01`.
    """
    keywords: List[str]
    level: str
    """
    `year`, `month`, `week` or `day`.
    """
    messages: conint(ge=0)
    names: List[str]
    """
    People, places and named things of the period, those in most of it first.
    """
    start: str
    """
    The span it covers, `start` included, `end` not (RFC 3339).
    """
    title: str
    version: conint(ge=0)
    """
    1 for the first rollup; a late episode adds a version (older ones stay readable).
    """


class TimelineOut(BaseModel):
    nodes: List[TimelineNodeOut]


class TurnOut(BaseModel):
    """
    A line quoted in a block: its episode (or `tail:<conversation>` for a message not yet in one)
    and its sequence number.
    """

    episode: str
    seq: conint(ge=0)


class AddedMessageOut(BaseModel):
    """
    Where one sent message is.
    """

    conversation: str
    id: Optional[str] = None
    """
    The id it was sent with, if any.
    """
    new: bool
    """
    False when the conversation already held a message with its id (nothing was stored).
    """
    seq: conint(ge=0)
    """
    Its sequence number in the conversation (1-based).
    """
    status: AddedStatus
    """
    `stored` (new), `duplicate` (its id held this same message) or `conflict` (its id holds
    a different message, which stays: `seq` is that message's).
    """


class ErrorBody(BaseModel):
    """
    The body of every error response.
    """

    error: ErrorDetail


class JobOut(BaseModel):
    """
    A job not yet done.
    """

    attempts: conint(ge=0)
    """
    How many times a worker took it.
    """
    conversation: Optional[str] = None
    """
    The conversation it works on (absent for a job this version cannot read).
    """
    id: int
    kind: Optional[str] = None
    """
    What it does: `segment` (cut pending messages into episodes), `review` (rate recalled
    memories) or `consolidate` (distil facts); absent for a job this version cannot read.
    """
    last_error: Optional[str] = None
    """
    Why its last attempt failed.
    """
    state: JobStateOut
    until: Optional[str] = None
    """
    When its lease ends (running) or it is tried again (retrying), RFC 3339.
    """
    worker: Optional[str] = None
    """
    The worker running it.
    """


class JobsOut(BaseModel):
    """
    The caller's jobs not yet done.
    """

    jobs: List[JobOut]


class MemoryOut(BaseModel):
    """
    An episode's memory strength (FSRS): how stable it is, when it is due, and the probability
    of recalling it from its last review on.
    """

    curve: List[CurvePointOut]
    """
    The forgetting curve, from the last review to 30 days past when it is due.
    """
    difficulty: Optional[float] = None
    due: Optional[str] = None
    last_review: Optional[str] = None
    retrievability: float
    """
    The probability of recall now.
    """
    reviews: List[ReviewOut]
    """
    The reviews it received (a recall rated against what followed), oldest first: the
    state each left it with.
    """
    stability_days: Optional[float] = None
    """
    Days until recall falls to the desired retention; absent before the first review.
    """


class MemoryPartOut(BaseModel):
    """
    The long-term lines that bear on the moment (any conversation of the tenant, none of the
    recent part).
    """

    context: str
    nothing_relevant: bool
    """
    True when nothing remembered bears on it: `context` is then empty.
    """
    query: Optional[str] = None
    """
    What was looked up: the request's query, else the newest message a person wrote.
    """
    share: conint(ge=0)
    """
    Its share, with what the recent part and the summary left unused.
    """
    tokens: conint(ge=0)
    turns: List[TurnOut]
    """
    The lines quoted, best first.
    """


class MessagesOut(BaseModel):
    """
    A conversation's messages, oldest first.
    """

    conversation: str
    messages: List[StoredMessageOut]
    next_before: Optional[conint(ge=0)] = None
    """
    Older messages remain: ask again with this as `before`.
    """


class NextTurnOut(BaseModel):
    """
    The block for the next turn, and each of its parts with the share it had.
    """

    budget: conint(ge=0)
    context: str
    """
    The block, ready to put in a prompt: the long-term lines, what came earlier, then the
    newest messages.
    """
    memory: MemoryPartOut
    recent: RecentOut
    summary: SummaryOut
    tokens: conint(ge=0)
    """
    Tokens of `context`, never more than `budget`.
    """


class ConversationOut(BaseModel):
    """
    A conversation's state.
    """

    conversation: str
    episodes: Optional[conint(ge=0)] = None
    """
    Episodes closed so far (only in `GET /v1/conversations/{conversation}`).
    """
    jobs: Optional[List[JobOut]] = None
    """
    Its segmentation jobs not yet done: queued, running, retrying or parked (only in
    `GET /v1/conversations/{conversation}`).
    """
    last_activity: Optional[str] = None
    """
    The newest message's time (RFC 3339).
    """
    last_seq: conint(ge=0)
    """
    The newest message's sequence number (1-based; 0 when it has none).
    """
    pending: conint(ge=0)
    """
    Messages not yet in an episode.
    """
    summary: Optional[SessionSummaryOut] = None


class EpisodeOut(BaseModel):
    """
    An episode: one stretch of a conversation about one thing.
    """

    boundary_reason: str
    """
    Why it ended where it did.
    """
    context_first_seq: Optional[conint(ge=0)] = None
    """
    Where the overlap carried in from the previous episode starts.
    """
    conversation: str
    date_match: Optional[bool] = None
    end: str
    first_seq: conint(ge=0)
    id: str
    keywords: List[str]
    last_seq: conint(ge=0)
    lexical_rank: Optional[conint(ge=0)] = None
    memory: Optional[MemoryOut] = None
    message_count: conint(ge=0)
    messages: Optional[List[MessageOut]] = None
    """
    `GET /v1/episodes/{id}` only: the overlap (`context: true`), then its own messages.
    """
    retrievability: Optional[float] = None
    score: Optional[float] = None
    """
    Recall only: the final score (higher is better) and its parts.
    """
    similarity: Optional[float] = None
    skeleton: Optional[SkeletonOut] = None
    start: str
    summary: str
    surprise: float
    """
    How unexpected its opening was after what came before, 0 to 1.
    """
    tenant: str
    title: str
    told_by: str
    """
    Who cut and told it: `llm` (the language model) or `fallback` (the LLM-free path).
    """
    told_note: Optional[str] = None
    """
    Why, where there is something to say (the model failed, its counts were repaired).
    """
    vector_rank: Optional[conint(ge=0)] = None
    versions: Optional[List[EpisodeVersionOut]] = None
    """
    `GET /v1/episodes/{id}` only: what its title and summary said before each edit, oldest
    first (empty if it was never edited).
    """


class EpisodesOut(BaseModel):
    """
    A page of episodes.
    """

    episodes: List[EpisodeOut]
    next_cursor: Optional[str] = None
    """
    Pass as `cursor` for the next page; absent on the last one.
    """


class RecallOut(BaseModel):
    """
    What recall found: `hits` without a budget; `context` with one.
    """

    context: Optional[str] = None
    """
    The context block, ready to put in a prompt.
    """
    facts: Optional[List[FactOut]] = None
    """
    Lasting facts that bear on the query, best first (distilled by the language model;
    absent when none does).
    """
    hits: List[EpisodeOut]
    """
    The episodes, best first, with why each came back.
    """
    names_read: Optional[List[NameReadOut]] = None
    """
    Words of the query this memory never heard, each read as a name it holds that it
    slips from ("Katrina" read as "Katrin"): the recall searched for the name (absent when
    no word was read so).
    """
    nothing_relevant: Optional[bool] = None
    """
    With a budget: true when nothing remembered bears on the query (no line and no fact):
    `context` is then empty. Not an error, and not the same as a memory that holds
    nothing to search.
    """
    tokens: Optional[conint(ge=0)] = None
    """
    Tokens of `context`.
    """
    turns: Optional[List[TurnOut]] = None
    """
    The lines quoted in `context`, best first.
    """


class AddedOut(BaseModel):
    """
    What `POST /v1/messages` did.
    """

    conflicts: conint(ge=0)
    """
    Messages not stored because their id already holds a different message (another role
    or content): the first write wins; each is `"status": "conflict"` in `messages`.
    """
    conversations: List[ConversationOut]
    """
    Each conversation the request touched, after it.
    """
    duplicates: conint(ge=0)
    """
    Messages skipped because their conversation already had their id, with the same role
    and content.
    """
    inserted: conint(ge=0)
    """
    Messages stored.
    """
    messages: List[AddedMessageOut]
    """
    Each message, in the order sent: where it is in its conversation.
    """
