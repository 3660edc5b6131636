//! What a person changes of an episode, and what it said before.

use epimem_core::Timestamp;
use serde::{Deserialize, Serialize};

use crate::StoreError;

/// A new title and summary for an episode; what is `None` stays as it is.
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeEdit {
    pub title: Option<String>,
    pub summary: Option<String>,
    /// When the edit was made.
    pub at: Timestamp,
}

impl EpisodeEdit {
    /// The longest title or summary kept, in characters.
    pub const MAX_CHARS: usize = 10_000;

    /// Refuses an edit that changes nothing, an empty title, or text too long to be one.
    pub fn check(&self) -> Result<(), StoreError> {
        if self.title.is_none() && self.summary.is_none() {
            return Err(StoreError::Invalid("an edit needs a title or a summary".into()));
        }
        if self.title.as_deref().is_some_and(|t| t.trim().is_empty()) {
            return Err(StoreError::Invalid("an episode's title cannot be empty".into()));
        }
        for (name, text) in [("title", &self.title), ("summary", &self.summary)] {
            if text.as_deref().is_some_and(|t| t.chars().count() > Self::MAX_CHARS) {
                return Err(StoreError::Invalid(format!(
                    "the {name} is longer than {} characters",
                    Self::MAX_CHARS
                )));
            }
        }
        Ok(())
    }
}

/// An episode's title and summary as they were before an edit replaced them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeVersion {
    /// 1 for the text the episode was told with, then one more per edit.
    pub version: u32,
    pub title: String,
    pub summary: String,
    /// When an edit replaced it.
    pub replaced_at: Timestamp,
}
