//! Boundary detection: pure functions from a run of messages to the places where a new episode
//! begins. Each segmenter proposes boundaries; a [`SegmentationPolicy`] composes them.

mod budget;
mod coherence;
mod cohesion;
mod cues;
mod intent;
mod overlap;
pub(crate) mod plan;
mod policy;
mod semantic;
mod surprise;
pub mod tiling;
mod time_gap;
mod work;

use std::ops::Range;

use serde::{Deserialize, Serialize};

pub use budget::{BudgetConfig, budget_boundaries};
pub use coherence::{
    CoherenceConfig, CoherenceWeights, FEATURES, GapFeatures, boundary_probabilities,
    coherence_boundaries, gap_features, gap_probabilities,
};
pub use cohesion::{CohesionConfig, cohesion_boundaries};
pub use intent::{IntentConfig, intent_boundaries};
pub use overlap::{OverlapConfig, overlap_start};
pub use plan::{ClosedSegment, Plan, plan_proposed, plan_segmentation};
pub use policy::{SegmentationPolicy, Surprises};
pub use semantic::{SemanticConfig, semantic_boundaries};
pub use surprise::opening_surprise;
pub use time_gap::{TimeGapConfig, time_gap_boundaries};
pub use work::{OverlapMeasure, WorkConfig, is_agent_work, work_boundaries};

use crate::{Role, Timestamp};

/// What a segmenter needs to know of a message.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SegmentMessage<'a> {
    pub role: Role,
    pub content: &'a str,
    pub timestamp: Timestamp,
    pub tokens: u32,
    /// The message's unit-length embedding, when an embedder is configured.
    pub embedding: Option<&'a [f32]>,
}

/// Why an episode ended where it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum BoundaryReason {
    /// A silence between two messages (soft at 30 min, hard past 3 h by default).
    TimeGap,
    /// The episode reached its token budget.
    TokenBudget,
    /// The episode reached its message cap.
    MessageCap,
    /// A user prompt changed the subject.
    IntentShift,
    /// The meaning of the conversation shifted (embeddings).
    TopicShift,
    /// The doubled window filled up without any boundary inside it.
    WindowFull,
    /// The oldest pending message waited too long.
    Age,
    /// The conversation fell silent.
    Idle,
    /// Someone asked for everything pending to be closed (session end, end of import).
    Flush,
    /// A language model judged that the topic, the intent or the mood changed.
    ModelJudged,
    /// The agent committed the work before it: the user's next request is another story.
    Commit,
}

impl BoundaryReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TimeGap => "time_gap",
            Self::TokenBudget => "token_budget",
            Self::MessageCap => "message_cap",
            Self::IntentShift => "intent_shift",
            Self::TopicShift => "topic_shift",
            Self::WindowFull => "window_full",
            Self::Age => "age",
            Self::Idle => "idle",
            Self::Flush => "flush",
            Self::ModelJudged => "model_judged",
            Self::Commit => "commit",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::TimeGap,
            Self::TokenBudget,
            Self::MessageCap,
            Self::IntentShift,
            Self::TopicShift,
            Self::WindowFull,
            Self::Age,
            Self::Idle,
            Self::Flush,
            Self::ModelJudged,
            Self::Commit,
        ]
        .into_iter()
        .find(|r| r.as_str() == s)
    }
}

/// How sure a segmenter is. A policy always keeps hard boundaries and may drop soft ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Strength {
    Soft,
    Hard,
}

/// A new episode begins at message `index` (never 0: a boundary sits between two messages).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Boundary {
    pub index: usize,
    pub reason: BoundaryReason,
    pub strength: Strength,
}

/// Every message's embedding, or `None` if any message has none.
pub(crate) fn embeddings<'a>(messages: &[SegmentMessage<'a>]) -> Option<Vec<&'a [f32]>> {
    messages.iter().map(|m| m.embedding).collect()
}

/// The half-open message ranges that `boundaries` (sorted, in `1..len`) cut `0..len` into.
pub fn segment_ranges(len: usize, boundaries: &[Boundary]) -> Vec<Range<usize>> {
    let mut ranges = Vec::with_capacity(boundaries.len() + 1);
    let mut start = 0;
    for b in boundaries {
        ranges.push(start..b.index);
        start = b.index;
    }
    if len > 0 {
        ranges.push(start..len);
    }
    ranges
}

#[cfg(test)]
pub(crate) mod test_support {
    use proptest::prelude::*;

    use super::*;

    /// An owned message for property tests.
    #[derive(Debug, Clone)]
    pub(crate) struct OwnedMessage {
        pub(crate) role: Role,
        pub(crate) content: String,
        pub(crate) timestamp: Timestamp,
        pub(crate) tokens: u32,
    }

    impl OwnedMessage {
        pub(crate) fn view(&self) -> SegmentMessage<'_> {
            SegmentMessage {
                role: self.role,
                content: &self.content,
                timestamp: self.timestamp,
                tokens: self.tokens,
                embedding: None,
            }
        }
    }

    /// Messages from `(role, text, seconds)`, ten tokens each.
    pub(crate) fn dialogue(lines: &[(Role, &str, i64)]) -> Vec<OwnedMessage> {
        lines
            .iter()
            .map(|&(role, content, seconds)| OwnedMessage {
                role,
                content: content.to_owned(),
                timestamp: Timestamp(seconds * 1000),
                tokens: 10,
            })
            .collect()
    }

    const WORDS: &[&str] = &[
        "garden", "tomato", "deploy", "server", "database", "recipe", "soup", "guitar", "chord",
        "travel", "paris", "ticket", "the", "and", "ok",
    ];

    /// Conversations with gaps from seconds to days, short and long prompts, big and small
    /// messages, and the odd out-of-order timestamp.
    pub(crate) fn conversation(max_len: usize) -> impl Strategy<Value = Vec<OwnedMessage>> {
        prop::collection::vec(
            (
                any::<bool>(),
                prop::collection::vec(0..WORDS.len(), 0..12),
                prop_oneof![0i64..120_000, 0i64..7_200_000, 0i64..86_400_000, -60_000i64..0],
                0u32..3_000,
            ),
            0..max_len,
        )
        .prop_map(|raw| {
            let mut t = 1_700_000_000_000i64;
            raw.into_iter()
                .map(|(user, words, gap, tokens)| {
                    t += gap;
                    OwnedMessage {
                        role: if user { Role::User } else { Role::Assistant },
                        content: words.iter().map(|&w| WORDS[w]).collect::<Vec<_>>().join(" "),
                        timestamp: Timestamp(t),
                        tokens,
                    }
                })
                .collect()
        })
    }

    /// The invariants every segmenter's output must satisfy.
    pub(crate) fn check_boundaries(
        len: usize,
        boundaries: &[Boundary],
    ) -> Result<(), TestCaseError> {
        for pair in boundaries.windows(2) {
            prop_assert!(pair[0].index < pair[1].index, "boundaries sorted and distinct");
        }
        for b in boundaries {
            prop_assert!(b.index >= 1 && b.index < len, "boundary {} out of 1..{len}", b.index);
        }
        let ranges = segment_ranges(len, boundaries);
        let covered: Vec<usize> = ranges.iter().flat_map(|r| r.clone()).collect();
        prop_assert_eq!(covered, (0..len).collect::<Vec<_>>(), "every message covered once");
        prop_assert!(ranges.iter().all(|r| !r.is_empty()));
        Ok(())
    }
}
