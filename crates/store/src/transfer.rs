//! What moves a memory from one store to another (`epimem export` / `import`).

use epimem_core::{ConversationKey, Episode, EpisodeId, Message, facts::Fact, fsrs::PendingReview};
use serde::{Deserialize, Serialize};

/// Everything stored of one conversation, read in one snapshot: its queue state, every message
/// (pending ones, and the blanked places of forgotten ones, included), its episodes with their
/// memory strength, the recalls waiting for review, its facts, and the cached message vectors
/// of each embedder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationExport {
    pub conversation: ConversationKey,
    pub user: Option<String>,
    pub agent: Option<String>,
    pub watermark: u64,
    pub window_doubled: bool,
    pub consolidated_upto: u64,
    /// In sequence order, from 1 without a gap.
    pub messages: Vec<Message>,
    /// In sequence order, apart, within `1..=watermark` (a forgotten episode leaves a gap of
    /// blanked messages).
    pub episodes: Vec<Episode>,
    /// Held for a review job or not: an import holds none (its jobs stay behind).
    pub pending_reviews: Vec<PendingReview>,
    /// In the order they became true.
    pub facts: Vec<ExportedFact>,
    /// Per embedder fingerprint, in name order.
    pub vectors: Vec<ExportedVectors>,
    /// What its episodes' titles and summaries said before they were edited, by episode id
    /// and version.
    #[serde(default)]
    pub versions: Vec<ExportedVersion>,
    /// The memory states its episodes' reviews left them with, by episode, oldest first.
    #[serde(default)]
    pub reviews: Vec<ExportedReview>,
}

/// The memory state one review left one of a conversation's episodes with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedReview {
    pub episode: EpisodeId,
    #[serde(flatten)]
    pub state: epimem_core::FsrsState,
}

/// An earlier title and summary of one of a conversation's episodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedVersion {
    pub episode: EpisodeId,
    #[serde(flatten)]
    pub version: crate::EpisodeVersion,
}

/// A fact with its vector and the embedder that made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedFact {
    pub fact: Fact,
    pub fingerprint: Option<String>,
    pub vector: Option<Vec<f32>>,
}

/// The cached vectors of one embedder, by message sequence number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedVectors {
    pub fingerprint: String,
    pub vectors: Vec<(u64, Vec<f32>)>,
}

impl ConversationExport {
    /// Why this cannot be stored as it is, if it cannot: messages that skip, episodes that
    /// overlap, run backwards or reach past the watermark.
    pub fn check(&self) -> Result<(), String> {
        let key = &self.conversation;
        for (i, m) in self.messages.iter().enumerate() {
            if m.seq != i as u64 + 1 {
                return Err(format!("{key}: message {} where {} was due", m.seq, i + 1));
            }
        }
        let last = self.messages.len() as u64;
        if self.watermark > last {
            return Err(format!("{key}: watermark {} past its {last} messages", self.watermark));
        }
        let mut next = 1;
        for e in &self.episodes {
            if e.conversation != *key || e.first_seq < next || e.last_seq < e.first_seq {
                return Err(format!(
                    "{key}: episode {} ({}..={}) overlaps or comes before message {next}",
                    e.id, e.first_seq, e.last_seq
                ));
            }
            next = e.last_seq + 1;
        }
        if let Some(v) =
            self.versions.iter().find(|v| !self.episodes.iter().any(|e| e.id == v.episode))
        {
            return Err(format!(
                "{key}: a version of episode {}, which it does not hold",
                v.episode
            ));
        }
        if next - 1 > self.watermark {
            return Err(format!(
                "{key}: episodes reach message {} past the watermark {}",
                next - 1,
                self.watermark
            ));
        }
        Ok(())
    }
}
