//! Values that cross the storage port.

use epimem_core::{
    ConversationKey, Episode, EpisodeId, FsrsState, JobId, Message, QueueSnapshot, Role, Timestamp,
    facts::{Fact, FactChange, FactId},
};
use serde::Serialize;

/// A message of an episode as the search indexes are built from it.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedMessage {
    pub episode: Episode,
    pub seq: u64,
    pub role: Role,
    /// Its speaker, else its role.
    pub author: String,
    pub content: String,
    /// Its cached vector of the model asked for, if there is one.
    pub vector: Option<Vec<f32>>,
}

/// One entry of the change log of a tenant's episodes: an episode closed (or forgotten), and
/// the change's number, which only grows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EpisodeChange {
    pub seq: u64,
    pub episode: EpisodeId,
    pub forgotten: bool,
    /// Only its memory strength changed (a review): its words did not.
    pub restated: bool,
}

/// A memory's state after a review, and the last review it was rated against: the new state
/// applies only if that is still its last review.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewedMemory {
    pub id: EpisodeId,
    pub reviewed_against: Option<Timestamp>,
    pub state: FsrsState,
}

/// The state of one conversation right after a push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushOutcome {
    pub conversation: ConversationKey,
    /// Messages actually added (duplicates by key are skipped).
    pub inserted: u64,
    pub queue: QueueSnapshot,
    /// Where each of its pushed messages is, in the order they were pushed.
    pub messages: Vec<PushedMessage>,
}

/// A message as its conversation holds it, with the episode it closed into (`None` while it
/// is in the open tail).
pub type HeldMessage = (Message, Option<EpisodeId>);

/// What taking back a conversation's newest message found.
#[derive(Debug, Clone, PartialEq)]
pub enum TakeBack {
    /// The message, now gone from every table.
    Taken(Message),
    /// No such conversation, or it holds no message.
    Nothing,
    /// The newest message is in an episode (this one), or a segmentation is closing it
    /// (`None`): only a message of the open tail can be taken back.
    Closed(Option<EpisodeId>),
}

/// Where one pushed message ended up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PushedMessage {
    /// Its position in the pushed slice (over all conversations).
    pub index: usize,
    /// Its sequence number in the conversation: the new one, or the stored one for a duplicate.
    pub seq: u64,
    /// Whether it was stored now (false: its conversation already held its key).
    pub new: bool,
    /// Not stored because its key already holds a different message (another role or text):
    /// the first write wins, and this one is reported rather than counted as a duplicate.
    pub conflict: bool,
}

impl PushedMessage {
    pub fn stored(index: usize, seq: u64) -> Self {
        Self { index, seq, new: true, conflict: false }
    }

    /// `sent` was not stored: its key already held the message of `role` and `content` at
    /// `seq`. It conflicts when it says something else; a message that was forgotten (its
    /// text blanked) takes nothing back and is a duplicate.
    pub fn already_held(
        index: usize,
        seq: u64,
        (role, content): (&str, &str),
        sent: &epimem_core::NewMessage,
    ) -> Self {
        let forgotten = content.is_empty();
        let conflict = !forgotten && (role != sent.role.as_str() || content != sent.content);
        Self { index, seq, new: false, conflict }
    }
}

/// What a segmentation job works on.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentationBatch {
    pub user: Option<String>,
    pub agent: Option<String>,
    pub watermark: u64,
    pub window_doubled: bool,
    /// Messages at or before the watermark, oldest first (for overlap).
    pub context: Vec<Message>,
    /// Messages after the watermark up to the job's `upto_seq`, oldest first.
    pub pending: Vec<Message>,
}

/// The result of a segmentation job, to be committed atomically.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentationCommit {
    pub job: JobId,
    pub conversation: ConversationKey,
    /// Consecutive episodes starting right after the watermark (possibly none).
    pub episodes: Vec<Episode>,
    pub window_doubled: bool,
    /// When to queue a consolidation of the conversation's episodes into facts (`None`: never,
    /// as without a language model; the episodes wait for one).
    pub consolidate: Option<ConsolidationRule>,
}

/// When closing episodes queues a consolidation: once this many episodes wait for one, or at
/// once when an episode this surprising closes (a flashbulb memory); never while another
/// consolidation of the conversation is queued or running.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConsolidationRule {
    pub every: u32,
    pub flashbulb: f64,
}

/// What a consolidation reads: the episodes not yet consolidated (oldest first, with their
/// messages) and the conversation's valid facts (newest first, with their vectors of the
/// embedder asked for).
#[derive(Debug, Clone, PartialEq)]
pub struct ConsolidationBatch {
    pub episodes: Vec<EpisodeDetail>,
    pub facts: Vec<StoredFact>,
}

/// A fact with its vector, when it has one of the embedder asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredFact {
    pub fact: Fact,
    pub vector: Option<Vec<f32>>,
}

/// What one step of a consolidation writes, in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct ConsolidationCommit {
    /// The job that asked, retired when `finished`; `None` for facts given whole (an
    /// import), which no job asked for.
    pub job: Option<JobId>,
    pub conversation: ConversationKey,
    pub changes: Vec<FactChange>,
    /// Vectors of the facts inserted, by id, made by `fingerprint`.
    pub vectors: Vec<(FactId, Vec<f32>)>,
    pub fingerprint: Option<String>,
    /// The episodes up to this message are consolidated now.
    pub through_seq: u64,
    /// Whether the job is done (else more steps follow).
    pub finished: bool,
}

/// Where a page of episodes ended: the next page starts after this episode. Episodes are
/// listed newest first (by start, then id), so a page stays put while episodes are added or
/// removed elsewhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EpisodeCursor {
    pub start: Timestamp,
    pub id: EpisodeId,
}

impl EpisodeCursor {
    /// The cursor of a page that ended with `episode`.
    pub fn after(episode: &Episode) -> Self {
        Self { start: episode.start, id: episode.id.clone() }
    }
}

/// An episode with the messages it covers.
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeDetail {
    pub episode: Episode,
    /// Overlap carried in from the previous episode, for context only.
    pub context: Vec<Message>,
    pub messages: Vec<Message>,
}

/// Counts over the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Stats {
    pub conversations: u64,
    pub messages: u64,
    pub pending_messages: u64,
    pub episodes: u64,
    pub queued_jobs: u64,
    pub failed_jobs: u64,
}

/// An API key as stored: its tenant and when it was made or revoked, never the key itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiKey {
    pub id: u64,
    pub tenant: String,
    /// What the key is for, as its creator said ("ci", "laptop").
    pub name: String,
    pub created: Timestamp,
    pub revoked: Option<Timestamp>,
}

/// Where a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    /// Waiting for a worker.
    Queued,
    /// Leased to a worker until `lease_until`.
    Running,
    /// Failed and waiting until `lease_until` to be tried again.
    Retrying,
    /// Failed too often (or could not run at all): kept with its error, never run again.
    Parked,
}

/// A job as an operator sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobStatus {
    pub id: JobId,
    /// What it does (`segment`, `review`, `consolidate`), and the conversation it works on;
    /// `None` for a job this version cannot read.
    pub kind: Option<&'static str>,
    pub conversation: Option<ConversationKey>,
    pub state: JobState,
    /// How many times it was claimed.
    pub attempts: u32,
    /// Why its last attempt failed.
    pub last_error: Option<String>,
    /// The worker holding it (running).
    pub worker: Option<String>,
    /// Its lease's end (running) or when it is tried again (retrying).
    pub until: Option<Timestamp>,
}
