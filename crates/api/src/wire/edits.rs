//! A person's corrections: a new title or summary, and what an episode said before.

use epimem_store::EpisodeVersion;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// What to change; what is left out stays.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EpisodeEditIn {
    /// The new title (not empty).
    pub title: Option<String>,
    /// The new summary.
    pub summary: Option<String>,
}

/// What an episode said before an edit.
#[derive(Debug, Serialize, ToSchema)]
pub struct EpisodeVersionOut {
    /// 1 for the text it was told with, one more per edit.
    pub version: u32,
    pub title: String,
    pub summary: String,
    /// When an edit replaced it (RFC 3339).
    pub replaced_at: String,
}

impl From<&EpisodeVersion> for EpisodeVersionOut {
    fn from(v: &EpisodeVersion) -> Self {
        Self {
            version: v.version,
            title: v.title.clone(),
            summary: v.summary.clone(),
            replaced_at: v.replaced_at.to_rfc3339(),
        }
    }
}

/// `GET /v1/episodes/{id}/versions`.
#[derive(Debug, Serialize, ToSchema)]
pub struct EpisodeVersionsOut {
    /// Oldest first; empty if it was never edited.
    pub versions: Vec<EpisodeVersionOut>,
}
