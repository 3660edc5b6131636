//! Conversations read back: the tenant's by name (`GET /v1/conversations`), a conversation's
//! messages (`GET /v1/conversations/{conversation}/messages`), and its newest one taken back
//! (`DELETE …/messages/newest`).

use epimem_core::{EpisodeId, Message};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// `GET /v1/conversations`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ConversationsQuery {
    /// Only those whose name starts with this.
    pub prefix: Option<String>,
    /// Only those named after this, in name order (pass `next_after` back for more).
    pub after: Option<String>,
    /// At most this many (default 100, at most 1000).
    pub limit: Option<usize>,
}

/// The tenant's conversations by name, in name order.
#[derive(Debug, Serialize, ToSchema)]
pub struct ConversationsOut {
    pub conversations: Vec<String>,
    /// More remain: ask again with this as `after`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_after: Option<String>,
}

/// `GET /v1/conversations/{conversation}/messages`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct MessagesQuery {
    /// Only messages before this sequence number (pass `next_before` back for older ones).
    pub before: Option<u64>,
    /// The newest this many of them (default 100, at most 1000).
    pub limit: Option<usize>,
}

/// A conversation's messages, oldest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct MessagesOut {
    pub conversation: String,
    pub messages: Vec<StoredMessageOut>,
    /// Older messages remain: ask again with this as `before`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_before: Option<u64>,
}

/// A message as the conversation holds it.
#[derive(Debug, Serialize, ToSchema)]
pub struct StoredMessageOut {
    /// Its sequence number in the conversation (1-based).
    pub seq: u64,
    /// The id it was sent with (none when it was sent without one).
    pub id: Option<String>,
    pub role: String,
    pub speaker: Option<String>,
    /// Conversation time (RFC 3339).
    pub timestamp: String,
    pub content: String,
    /// What it was sent with (absent when nothing).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<HashMap<String, serde_json::Value>>)]
    pub metadata: Option<serde_json::Value>,
    /// The episode it closed into; absent while it is in the open tail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub episode: Option<String>,
}

impl StoredMessageOut {
    pub fn new(m: &Message, episode: Option<&EpisodeId>) -> Self {
        Self {
            seq: m.seq,
            id: m.key.strip_prefix("id:").map(str::to_owned),
            role: m.role.as_str().into(),
            speaker: m.speaker.clone(),
            timestamp: m.timestamp.to_rfc3339(),
            content: m.content.clone(),
            metadata: (!m.metadata.is_null()).then(|| m.metadata.clone()),
            episode: episode.map(|e| e.0.clone()),
        }
    }
}
