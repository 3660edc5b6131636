//! Semantic segmentation: topic shifts read from message embeddings.

use serde::{Deserialize, Serialize};

use crate::{Role, telling::keywords::word_count};

use super::{
    Boundary, BoundaryReason, SegmentMessage, Strength,
    tiling::{Cutoff, depth_scores, gap_similarities, select_boundaries, smooth},
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SemanticConfig {
    pub enabled: bool,
    /// Messages on each side of a gap that are compared.
    pub window: usize,
    /// Neighbours on each side averaged into each gap's similarity.
    pub smoothing: usize,
    /// A gap is a boundary when its depth exceeds the dialogue's mean depth plus this many
    /// standard deviations (the cut-off adapts to each dialogue)...
    pub cutoff_std_devs: f64,
    /// ...and this absolute floor.
    pub min_depth: f64,
    /// A gap whose two windows are more similar than this is never a boundary, however deep
    /// its dip: a dip relative to its neighbours is not evidence that the subject changed,
    /// and a cut-off relative to the batch always finds something to cut (1.0 turns the rule
    /// off).
    pub max_similarity: f64,
    /// Two semantic boundaries are at least this many messages apart.
    pub min_gap: usize,
    /// Depth at a gap before a message that is not the user's is scaled by this: people
    /// change the subject, agents answer (1.0 treats every speaker alike; 0.0 cuts only before
    /// user messages).
    pub non_user_weight: f64,
    /// Messages with fewer words than this never open an episode: "ok", "yes do it" and
    /// "5,6" answer what came before (0 turns the rule off).
    pub min_words: usize,
}

impl Default for SemanticConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            window: 2,
            smoothing: 0,
            cutoff_std_devs: -0.25,
            min_depth: 0.2,
            max_similarity: 0.4,
            min_gap: 2,
            non_user_weight: 0.0,
            min_words: 5,
        }
    }
}

/// Boundaries where the meaning of the conversation shifts. Needs every message's embedding;
/// proposes nothing if any is missing.
pub fn semantic_boundaries(
    messages: &[SegmentMessage<'_>],
    config: &SemanticConfig,
) -> Vec<Boundary> {
    let Some(vectors) = super::embeddings(messages) else { return Vec::new() };
    let sims = smooth(&gap_similarities(&vectors, config.window), config.smoothing);
    let mut depths = depth_scores(&sims);
    for (gap, depth) in depths.iter_mut().enumerate() {
        if sims[gap] > config.max_similarity {
            *depth = 0.0;
        }
        let opener = messages[gap + 1];
        if opener.role != Role::User {
            *depth *= config.non_user_weight;
        }
        if word_count(opener.content) < config.min_words {
            *depth = 0.0;
        }
    }
    let cutoff = Cutoff {
        std_devs: config.cutoff_std_devs,
        min_depth: config.min_depth,
        min_gap: config.min_gap,
    };
    let cuts: Vec<usize> =
        select_boundaries(&depths, cutoff).into_iter().filter(|&i| i < messages.len()).collect();
    topic_shifts(cuts)
}

/// Soft topic-shift boundaries at `cuts` (sorted, in `1..len`).
pub(crate) fn topic_shifts(cuts: Vec<usize>) -> Vec<Boundary> {
    cuts.into_iter()
        .map(|index| Boundary {
            index,
            reason: BoundaryReason::TopicShift,
            strength: Strength::Soft,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::{Timestamp, segment::test_support::check_boundaries};

    fn messages(vectors: &[Vec<f32>]) -> Vec<SegmentMessage<'_>> {
        vectors
            .iter()
            .map(|v| SegmentMessage {
                role: Role::User,
                content: "",
                timestamp: Timestamp(0),
                tokens: 1,
                embedding: Some(v),
            })
            .collect()
    }

    /// Every speaker may open an episode and message length does not matter.
    fn plain() -> SemanticConfig {
        SemanticConfig { non_user_weight: 1.0, min_words: 0, ..Default::default() }
    }

    #[test]
    fn finds_the_shift_between_two_topics() {
        let mut vs = vec![vec![1.0, 0.1, 0.0]; 6];
        vs.extend(vec![vec![0.0, 0.1, 1.0]; 6]);
        let b = semantic_boundaries(&messages(&vs), &plain());
        assert_eq!(b.iter().map(|b| b.index).collect::<Vec<_>>(), [6]);
    }

    #[test]
    fn user_turns_can_be_preferred() {
        // The shift happens at message 5, an assistant turn; with weight 0 the cut moves to a
        // user turn or disappears, never stays on the assistant.
        let mut vs = vec![vec![1.0, 0.1, 0.0]; 5];
        vs.extend(vec![vec![0.0, 0.1, 1.0]; 7]);
        let mut msgs = messages(&vs);
        for (i, m) in msgs.iter_mut().enumerate() {
            m.role = if i % 2 == 0 { Role::User } else { Role::Assistant };
        }
        let any = semantic_boundaries(&msgs, &plain());
        assert_eq!(any.iter().map(|b| b.index).collect::<Vec<_>>(), [5]);
        let users = SemanticConfig { non_user_weight: 0.0, ..plain() };
        assert!(semantic_boundaries(&msgs, &users).iter().all(|b| b.index % 2 == 0));
    }

    #[test]
    fn terse_messages_never_open_an_episode() {
        let mut vs = vec![vec![1.0, 0.1, 0.0]; 6];
        vs.extend(vec![vec![0.0, 0.1, 1.0]; 6]);
        let texts: Vec<String> =
            (0..12)
                .map(|i| {
                    if i == 6 {
                        "ok".to_owned()
                    } else {
                        format!("a full sentence number {i} here")
                    }
                })
                .collect();
        let mut msgs = messages(&vs);
        for (m, t) in msgs.iter_mut().zip(&texts) {
            m.content = t;
        }
        let config = SemanticConfig { min_words: 5, ..plain() };
        assert!(semantic_boundaries(&msgs, &config).iter().all(|b| b.index != 6));
    }

    #[test]
    fn needs_every_embedding() {
        let vs = vec![vec![1.0f32, 0.0]; 6];
        let mut msgs = messages(&vs);
        msgs[3].embedding = None;
        assert!(semantic_boundaries(&msgs, &SemanticConfig::default()).is_empty());
    }

    proptest! {
        #[test]
        fn boundaries_are_valid(
            raw in prop::collection::vec(prop::collection::vec(-1.0f32..1.0, 4), 0..50),
            window in 1usize..4,
            min_gap in 1usize..4,
        ) {
            let config = SemanticConfig { window, min_gap, ..plain() };
            let msgs = messages(&raw);
            let b = semantic_boundaries(&msgs, &config);
            check_boundaries(msgs.len(), &b)?;
            for w in b.windows(2) {
                prop_assert!(w[1].index - w[0].index >= min_gap);
            }
        }
    }
}
