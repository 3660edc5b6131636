//! Episodes: the stories epimem remembers.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{BoundaryReason, ConversationKey, Timestamp};

/// A deterministic episode id (see [`crate::episode_id`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EpisodeId(pub String);

/// What the open tail's ids start with: no episode id does (`ep_…`).
const OPEN_TAIL: &str = "tail:";

impl EpisodeId {
    /// The id recall gives the open tail of `conversation`: its messages not yet closed into
    /// an episode, searched and quoted beside the episodes.
    pub fn open_tail(conversation: &crate::ConversationKey) -> Self {
        Self(format!("{OPEN_TAIL}{}", conversation.conversation))
    }

    /// Whether this is an open tail's id rather than an episode's.
    pub fn is_open_tail(&self) -> bool {
        self.0.starts_with(OPEN_TAIL)
    }

    /// The conversation whose open tail this id names, if it names one.
    pub fn open_tail_of(&self) -> Option<&str> {
        self.0.strip_prefix(OPEN_TAIL)
    }
}

impl fmt::Display for EpisodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Memory-strength state (FSRS). Reserved: filled in once episodes are scheduled for review.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct FsrsState {
    pub stability: Option<f64>,
    pub difficulty: Option<f64>,
    pub last_review: Option<Timestamp>,
    pub due: Option<Timestamp>,
}

/// One closed episode of a conversation: messages `first_seq..=last_seq`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    pub id: EpisodeId,
    pub conversation: ConversationKey,
    pub user: Option<String>,
    pub agent: Option<String>,
    pub first_seq: u64,
    pub last_seq: u64,
    /// First message carried over from before `first_seq` as context (overlap). Those messages
    /// belong to the previous episode; they are referenced here, never copied.
    pub context_first_seq: Option<u64>,
    pub start: Timestamp,
    pub end: Timestamp,
    pub title: String,
    pub summary: String,
    pub keywords: Vec<String>,
    /// How unexpected the episode was, in `0.0..=1.0`.
    pub surprise: f64,
    /// Why the episode ended where it did.
    pub boundary_reason: BoundaryReason,
    pub fsrs: FsrsState,
    /// Which path cut and told it. Kept by the store and shown to people; search indexes,
    /// which save episodes, have no use for it (hence not serialized).
    #[serde(skip)]
    pub told_by: ToldBy,
    /// Why, where there is something to say: the model failed, its counts were repaired, a
    /// single message needed no model.
    #[serde(skip)]
    pub told_note: Option<String>,
}

/// Who cut an episode and told it: the language model, or the LLM-free path (without a model,
/// or when the model failed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToldBy {
    Llm,
    #[default]
    Fallback,
}

impl ToldBy {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Llm => "llm",
            Self::Fallback => "fallback",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Llm, Self::Fallback].into_iter().find(|t| t.as_str() == s)
    }
}

impl Episode {
    pub fn message_count(&self) -> u64 {
        self.last_seq - self.first_seq + 1
    }
}
