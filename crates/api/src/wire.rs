//! What every door reads and writes: the HTTP API's JSON, the MCP tools' structured content and
//! `epimem`'s `--json` output are these same types. Domain types never cross the wire: each is
//! turned into one of these here. Field names are a public contract: add, never rename (an
//! older name stays as an alias).

use crate::engine::{RecallHit, RunReport};
use epimem_core::{
    Episode, EpisodeId, Message, Timestamp,
    work::{Skeleton, skeleton},
};
use epimem_store::{EpisodeCursor, EpisodeDetail, JobState, JobStatus};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

mod admin;
mod edits;
mod facts;
mod messages;
mod next_turn;
mod project;
mod recall;
mod timeline;

pub use admin::{KeyOut, KeysOut, StatsOut};
pub use edits::{EpisodeEditIn, EpisodeVersionOut, EpisodeVersionsOut};
pub use facts::{FactOut, FactsOut, FactsQuery};
pub use messages::{
    ConversationsOut, ConversationsQuery, MessagesOut, MessagesQuery, StoredMessageOut,
};
pub use next_turn::{
    DEFAULT_NEXT_TURN_BUDGET, MemoryPartOut, NextTurnIn, NextTurnOut, RecentOut, SummaryOut,
};
pub use project::{ProjectMemoryIn, ProjectMemoryOut};
pub use recall::{NOTHING_RELEVANT, NameReadOut, RecallIn, RecallOut, TurnOut};
pub use timeline::{TimelineNodeOut, TimelineOut, TimelineQuery, VersionQuery};

// The wire's shape of a message (JSON, a time as text); read into the engine's
// `MessageInput`, which every door makes, and stored as core's `NewMessage`.
/// One message to remember: the fields of a line of `epimem ingest`.
#[derive(Debug, Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageIn {
    /// The conversation it belongs to; created on first use.
    pub conversation: String,
    /// `user`, `assistant`, `system` or `tool`.
    pub role: String,
    pub content: String,
    /// Who spoke, when the role is not enough ("Caroline").
    #[serde(default)]
    pub speaker: Option<String>,
    /// RFC 3339; the server's clock when absent. One before the newest message of its
    /// conversation is stored at that newest time (a conversation's time only moves forward),
    /// the time it was sent with kept as `given_timestamp` in its metadata.
    #[serde(default)]
    pub timestamp: Option<String>,
    /// Any JSON object, kept with the message.
    #[serde(default)]
    #[schema(value_type = Option<HashMap<String, serde_json::Value>>)]
    pub metadata: Option<serde_json::Value>,
    /// Idempotency key, unique within the conversation: a message sent again with the same
    /// id is stored once. Without one every request stores a new message.
    #[serde(default)]
    pub id: Option<String>,
    /// The person the conversation is with: recall, episodes, facts and the timeline can be
    /// asked for one person, and a person forgotten (`DELETE /v1/users/{user}`).
    #[serde(default)]
    pub user: Option<String>,
    /// The project a coding agent works in (its repository's root folder). Also read as
    /// `agent`.
    #[serde(default, alias = "agent")]
    pub project: Option<String>,
}

/// What `POST /v1/messages` did.
#[derive(Debug, Serialize, ToSchema)]
pub struct AddedOut {
    /// Messages stored.
    pub inserted: u64,
    /// Messages skipped because their conversation already had their id, with the same role
    /// and content.
    pub duplicates: u64,
    /// Messages not stored because their id already holds a different message (another role
    /// or content): the first write wins; each is `"status": "conflict"` in `messages`.
    pub conflicts: u64,
    /// Each message, in the order sent: where it is in its conversation.
    pub messages: Vec<AddedMessageOut>,
    /// Each conversation the request touched, after it.
    pub conversations: Vec<ConversationOut>,
}

/// Where one sent message is.
#[derive(Debug, Serialize, ToSchema)]
pub struct AddedMessageOut {
    pub conversation: String,
    /// The id it was sent with, if any.
    pub id: Option<String>,
    /// Its sequence number in the conversation (1-based).
    pub seq: u64,
    /// False when the conversation already held a message with its id (nothing was stored).
    pub new: bool,
    /// `stored` (new), `duplicate` (its id held this same message) or `conflict` (its id holds
    /// a different message, which stays: `seq` is that message's).
    pub status: AddedStatus,
}

/// What became of one sent message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AddedStatus {
    Stored,
    Duplicate,
    Conflict,
}

impl AddedStatus {
    pub fn of(pushed: &epimem_store::PushedMessage) -> Self {
        match (pushed.new, pushed.conflict) {
            (true, _) => Self::Stored,
            (false, false) => Self::Duplicate,
            (false, true) => Self::Conflict,
        }
    }
}

/// A conversation's state.
#[derive(Debug, Serialize, ToSchema)]
pub struct ConversationOut {
    pub conversation: String,
    /// The newest message's sequence number (1-based; 0 when it has none).
    pub last_seq: u64,
    /// Messages not yet in an episode.
    pub pending: u64,
    /// The newest message's time (RFC 3339).
    pub last_activity: Option<String>,
    /// Episodes closed so far (only in `GET /v1/conversations/{conversation}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub episodes: Option<u64>,
    /// Its segmentation jobs not yet done: queued, running, retrying or parked (only in
    /// `GET /v1/conversations/{conversation}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs: Option<Vec<JobOut>>,
    /// The session told from its episodes: what it was about and its largest episodes'
    /// titles (only in `GET /v1/conversations/{conversation}`, once it has an episode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<SessionSummaryOut>,
}

/// A session summed up from its episodes.
#[derive(Debug, Serialize, ToSchema)]
pub struct SessionSummaryOut {
    pub title: String,
    pub bullets: Vec<String>,
    pub keywords: Vec<String>,
    /// People, places and named things of the session.
    pub names: Vec<String>,
    pub messages: u64,
}

/// A job not yet done.
#[derive(Debug, Serialize, ToSchema)]
pub struct JobOut {
    pub id: i64,
    /// What it does: `segment` (cut pending messages into episodes), `review` (rate recalled
    /// memories) or `consolidate` (distil facts); absent for a job this version cannot read.
    pub kind: Option<String>,
    /// The conversation it works on (absent for a job this version cannot read).
    pub conversation: Option<String>,
    pub state: JobStateOut,
    /// How many times a worker took it.
    pub attempts: u32,
    /// Why its last attempt failed.
    pub last_error: Option<String>,
    /// The worker running it.
    pub worker: Option<String>,
    /// When its lease ends (running) or it is tried again (retrying), RFC 3339.
    pub until: Option<String>,
}

impl From<JobStatus> for JobOut {
    fn from(j: JobStatus) -> Self {
        Self {
            id: j.id.0,
            kind: j.kind.map(str::to_owned),
            conversation: j.conversation.map(|c| c.conversation),
            state: match j.state {
                JobState::Queued => JobStateOut::Queued,
                JobState::Running => JobStateOut::Running,
                JobState::Retrying => JobStateOut::Retrying,
                JobState::Parked => JobStateOut::Parked,
            },
            attempts: j.attempts,
            last_error: j.last_error,
            worker: j.worker,
            until: j.until.map(Timestamp::to_rfc3339),
        }
    }
}

/// Where a job stands.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobStateOut {
    /// Waiting for a worker.
    Queued,
    /// A worker runs it (its lease ends at `until`).
    Running,
    /// It failed and is tried again at `until`.
    Retrying,
    /// It failed too often: kept with its error, never run again; its messages go to a later
    /// job.
    Parked,
}

/// `GET /v1/jobs`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct JobsQuery {
    /// Only this conversation's.
    pub conversation: Option<String>,
    /// At most this many, oldest first (default 100, at most 1000).
    pub limit: Option<usize>,
}

/// The caller's jobs not yet done.
#[derive(Debug, Serialize, ToSchema)]
pub struct JobsOut {
    pub jobs: Vec<JobOut>,
}

/// What a flush closed.
#[derive(Debug, Serialize, ToSchema)]
pub struct FlushedOut {
    pub episodes_closed: u64,
    pub messages_closed: u64,
}

impl From<RunReport> for FlushedOut {
    fn from(r: RunReport) -> Self {
        Self { episodes_closed: r.episodes_closed, messages_closed: r.messages_closed }
    }
}

/// What a deletion removed.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeletedOut {
    /// Episodes deleted.
    pub episodes: u64,
}

/// `GET /v1/episodes` filters.
#[derive(Debug, Default, Clone, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EpisodesQuery {
    /// Only this conversation.
    pub conversation: Option<String>,
    /// Only this person's conversations (their messages' `user`).
    pub user: Option<String>,
    /// Only the sessions of this project (a coding agent's: its repository's root folder, as
    /// `epimem hook` records it). Also read as `agent`.
    #[serde(alias = "agent")]
    pub project: Option<String>,
    /// Only episodes that end at or after this time (RFC 3339). Also read as `from`.
    #[serde(alias = "from")]
    pub since: Option<String>,
    /// Only episodes that start at or before this time (RFC 3339). Also read as `to`.
    #[serde(alias = "to")]
    pub until: Option<String>,
    /// At most this many (default 50, at most 1000).
    pub limit: Option<usize>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// A cursor as the API writes it: the episode's start in milliseconds, a dot, its id.
pub fn encode_cursor(cursor: &EpisodeCursor) -> String {
    format!("{}.{}", cursor.start.millis(), cursor.id)
}

/// The cursor `text` names, if it is one [`encode_cursor`] could have written.
pub fn decode_cursor(text: &str) -> Option<EpisodeCursor> {
    let (start, id) = text.split_once('.')?;
    let id_is_plain = !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    id_is_plain.then_some(())?;
    Some(EpisodeCursor { start: Timestamp(start.parse().ok()?), id: EpisodeId(id.to_owned()) })
}

/// A page of episodes.
#[derive(Debug, Serialize, ToSchema)]
pub struct EpisodesOut {
    pub episodes: Vec<EpisodeOut>,
    /// Pass as `cursor` for the next page; absent on the last one.
    pub next_cursor: Option<String>,
}

/// An episode: one stretch of a conversation about one thing.
#[derive(Debug, Serialize, ToSchema)]
pub struct EpisodeOut {
    pub id: String,
    pub tenant: String,
    pub conversation: String,
    pub first_seq: u64,
    pub last_seq: u64,
    pub message_count: u64,
    /// Where the overlap carried in from the previous episode starts.
    pub context_first_seq: Option<u64>,
    pub start: String,
    pub end: String,
    pub title: String,
    pub summary: String,
    pub keywords: Vec<String>,
    /// How unexpected its opening was after what came before, 0 to 1.
    pub surprise: f64,
    /// Why it ended where it did.
    pub boundary_reason: String,
    /// Who cut and told it: `llm` (the language model) or `fallback` (the LLM-free path).
    pub told_by: String,
    /// Why, where there is something to say (the model failed, its counts were repaired).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub told_note: Option<String>,
    /// Recall only: the final score (higher is better) and its parts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lexical_rank: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector_rank: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retrievability: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date_match: Option<bool>,
    /// `GET /v1/episodes/{id}` only: the overlap (`context: true`), then its own messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<MessageOut>>,
    /// `GET /v1/episodes/{id}` of agent work only: what its tool actions touched and did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skeleton: Option<SkeletonOut>,
    /// `GET /v1/episodes/{id}` only: its memory strength and forgetting curve.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryOut>,
    /// `GET /v1/episodes/{id}` only: what its title and summary said before each edit, oldest
    /// first (empty if it was never edited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub versions: Option<Vec<EpisodeVersionOut>>,
}

/// An episode's memory strength (FSRS): how stable it is, when it is due, and the probability
/// of recalling it from its last review on.
#[derive(Debug, Serialize, ToSchema)]
pub struct MemoryOut {
    /// Days until recall falls to the desired retention; absent before the first review.
    pub stability_days: Option<f64>,
    pub difficulty: Option<f64>,
    pub last_review: Option<String>,
    pub due: Option<String>,
    /// The probability of recall now.
    pub retrievability: f64,
    /// The forgetting curve, from the last review to 30 days past when it is due.
    pub curve: Vec<CurvePointOut>,
    /// The reviews it received (a recall rated against what followed), oldest first: the
    /// state each left it with.
    pub reviews: Vec<ReviewOut>,
}

/// The memory state a review left an episode with.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReviewOut {
    pub at: Option<String>,
    pub stability_days: Option<f64>,
    pub difficulty: Option<f64>,
    pub due: Option<String>,
}

/// A point of a forgetting curve.
#[derive(Debug, Serialize, ToSchema)]
pub struct CurvePointOut {
    pub at: String,
    pub retrievability: f64,
}

impl MemoryOut {
    /// From the state, the probability of recall `now`, the curve and the reviews received.
    pub fn new(
        state: &epimem_core::FsrsState,
        now: f64,
        curve: &[(epimem_core::Timestamp, f64)],
        reviews: &[epimem_core::FsrsState],
    ) -> Self {
        Self {
            stability_days: state.stability,
            difficulty: state.difficulty,
            last_review: state.last_review.map(|t| t.to_rfc3339()),
            due: state.due.map(|t| t.to_rfc3339()),
            retrievability: now,
            curve: curve
                .iter()
                .map(|&(at, r)| CurvePointOut { at: at.to_rfc3339(), retrievability: r })
                .collect(),
            reviews: reviews
                .iter()
                .map(|r| ReviewOut {
                    at: r.last_review.map(|t| t.to_rfc3339()),
                    stability_days: r.stability,
                    difficulty: r.difficulty,
                    due: r.due.map(|t| t.to_rfc3339()),
                })
                .collect(),
        }
    }
}

/// The skeleton of an episode of agent work, counted from its actions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SkeletonOut {
    /// The user's prompts, and the first and last one's sequence numbers.
    pub prompts: usize,
    pub first_prompt: Option<u64>,
    pub last_prompt: Option<u64>,
    /// Actions that read or searched.
    pub investigate: usize,
    /// Actions that edited, wrote or ran a command.
    pub execute: usize,
    pub failures: usize,
    /// The files touched most, most first.
    pub hot_files: Vec<String>,
    /// What failed (commands, searches or files), each once.
    pub failed: Vec<String>,
    /// The `git commit` command lines it ran.
    pub commits: Vec<String>,
    pub duration_seconds: f64,
}

impl From<&Skeleton> for SkeletonOut {
    fn from(s: &Skeleton) -> Self {
        Self {
            prompts: s.prompts,
            first_prompt: s.first_prompt,
            last_prompt: s.last_prompt,
            investigate: s.investigate,
            execute: s.execute,
            failures: s.failures,
            hot_files: s.files().into_iter().map(str::to_owned).collect(),
            failed: s.failed.clone(),
            commits: s.commits.clone(),
            duration_seconds: s.duration_ms as f64 / 1000.0,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MessageOut {
    pub seq: u64,
    /// The id the message was sent with (none when it was sent without one).
    pub id: Option<String>,
    pub role: String,
    pub speaker: Option<String>,
    pub timestamp: String,
    pub content: String,
    /// Carried in from the previous episode for context.
    pub context: bool,
}

impl From<&Episode> for EpisodeOut {
    fn from(e: &Episode) -> Self {
        Self {
            id: e.id.0.clone(),
            tenant: e.conversation.tenant.clone(),
            conversation: e.conversation.conversation.clone(),
            first_seq: e.first_seq,
            last_seq: e.last_seq,
            message_count: e.message_count(),
            context_first_seq: e.context_first_seq,
            start: e.start.to_rfc3339(),
            end: e.end.to_rfc3339(),
            title: e.title.clone(),
            summary: e.summary.clone(),
            keywords: e.keywords.clone(),
            surprise: e.surprise,
            boundary_reason: e.boundary_reason.as_str().into(),
            told_by: e.told_by.as_str().into(),
            told_note: e.told_note.clone(),
            score: None,
            lexical_rank: None,
            vector_rank: None,
            similarity: None,
            retrievability: None,
            date_match: None,
            messages: None,
            skeleton: None,
            memory: None,
            versions: None,
        }
    }
}

impl From<&RecallHit> for EpisodeOut {
    fn from(h: &RecallHit) -> Self {
        Self {
            score: Some(h.score),
            lexical_rank: h.lexical_rank,
            vector_rank: h.vector_rank,
            similarity: h.similarity,
            retrievability: Some(h.retrievability),
            date_match: Some(h.date_match),
            ..Self::from(&h.episode)
        }
    }
}

impl From<&EpisodeDetail> for EpisodeOut {
    fn from(d: &EpisodeDetail) -> Self {
        let context = d.context.iter().map(|m| MessageOut::new(m, true));
        let messages = d.messages.iter().map(|m| MessageOut::new(m, false));
        Self {
            messages: Some(context.chain(messages).collect()),
            skeleton: skeleton(&d.messages).as_ref().map(SkeletonOut::from),
            ..Self::from(&d.episode)
        }
    }
}

impl MessageOut {
    pub fn new(m: &Message, context: bool) -> Self {
        Self {
            seq: m.seq,
            id: m.key.strip_prefix("id:").map(str::to_owned),
            role: m.role.as_str().into(),
            speaker: m.speaker.clone(),
            timestamp: m.timestamp.to_rfc3339(),
            content: m.content.clone(),
            context,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_read_back_as_written() {
        for (start, id) in [(0, "ep_0"), (1_773_478_800_000, "ep_9f2c"), (-5, "ep_x")] {
            let cursor = EpisodeCursor { start: Timestamp(start), id: EpisodeId(id.into()) };
            let text = encode_cursor(&cursor);
            assert!(text.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)));
            assert_eq!(decode_cursor(&text), Some(cursor));
        }
    }

    #[test]
    fn what_no_server_wrote_is_no_cursor() {
        for text in ["", "zz", "12", "x.ep_1", "1.", "1.ep 1", "1.ep/1", "1.é"] {
            assert_eq!(decode_cursor(text), None, "{text}");
        }
    }
}
