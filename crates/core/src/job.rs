//! Background work: a closed set of jobs, persisted in the store and claimed with leases.

use serde::{Deserialize, Serialize};

use crate::{ConversationKey, EpisodeId, TriggerKind};

/// A job's row id in the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JobId(pub i64);

/// What a job does. Serialized into the store, so variants only grow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum JobKind {
    /// Segment the pending messages of a conversation up to `upto_seq`. The job's id is the
    /// conversation's fence: only the job that set the fence may commit.
    Segment { conversation: ConversationKey, upto_seq: u64, trigger: TriggerKind },
    /// Rate the memories recalled in a conversation against the episodes that followed the
    /// recalls (`following`, closed by the segmentation that queued this job); the recalls
    /// themselves stay in the store, held for this job, so forgetting reaches them.
    Review { conversation: ConversationKey, following: Vec<EpisodeId> },
    /// Distil facts from the conversation's episodes not yet consolidated, up to message
    /// `upto_seq`.
    Consolidate { conversation: ConversationKey, upto_seq: u64 },
}

impl JobKind {
    /// What the job does, as a word: `segment`, `review` or `consolidate`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Segment { .. } => "segment",
            Self::Review { .. } => "review",
            Self::Consolidate { .. } => "consolidate",
        }
    }

    /// The conversation the job works on.
    pub fn conversation(&self) -> &ConversationKey {
        match self {
            Self::Segment { conversation, .. }
            | Self::Review { conversation, .. }
            | Self::Consolidate { conversation, .. } => conversation,
        }
    }
}

/// A job claimed by a worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub id: JobId,
    pub kind: JobKind,
    /// How many times the job has been claimed, this claim included.
    pub attempts: u32,
}
