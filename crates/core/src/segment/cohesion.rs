//! Cohesion segmentation: the globally best split of a batch into topically cohesive
//! segments, by dynamic programming over message embeddings.
//!
//! A segment's cohesion is the length of the sum of its unit vectors (`√m` when its `m`
//! messages agree, less as they diverge). The split maximizes total cohesion minus `penalty`
//! per segment, so a boundary is placed only where splitting gains more than the penalty.

use serde::{Deserialize, Serialize};

use super::{Boundary, SegmentMessage};
use crate::Role;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CohesionConfig {
    pub enabled: bool,
    /// Cost of one more segment, in units of cohesion.
    pub penalty: f64,
    /// Only start segments at user messages (people change the subject; agents answer).
    pub user_turns_only: bool,
}

impl Default for CohesionConfig {
    fn default() -> Self {
        Self { enabled: false, penalty: 0.9, user_turns_only: true }
    }
}

/// Boundaries of the most cohesive split. Needs every message's embedding; proposes nothing if
/// any is missing.
pub fn cohesion_boundaries(
    messages: &[SegmentMessage<'_>],
    config: &CohesionConfig,
) -> Vec<Boundary> {
    let Some(vectors) = super::embeddings(messages) else { return Vec::new() };
    let n = vectors.len();
    if n < 2 {
        return Vec::new();
    }
    let dim = vectors.iter().map(|v| v.len()).max().unwrap_or(0);
    // prefix[i] = sum of vectors[..i]
    let mut prefix = vec![vec![0.0f64; dim]; n + 1];
    for (i, v) in vectors.iter().enumerate() {
        let (done, rest) = prefix.split_at_mut(i + 1);
        for (k, slot) in rest[0].iter_mut().enumerate() {
            *slot = done[i][k] + v.get(k).map_or(0.0, |&x| f64::from(x));
        }
    }
    let cohesion = |i: usize, j: usize| -> f64 {
        prefix[j].iter().zip(&prefix[i]).map(|(a, b)| (a - b) * (a - b)).sum::<f64>().sqrt()
    };
    let may_start = |i: usize| !config.user_turns_only || messages[i].role == Role::User;
    // best[j]: best score of a split of the first j messages; back[j]: where its last segment
    // starts.
    let mut best = vec![f64::NEG_INFINITY; n + 1];
    let mut back = vec![0usize; n + 1];
    best[0] = 0.0;
    for j in 1..=n {
        for i in 0..j {
            if (i > 0 && !may_start(i)) || best[i] == f64::NEG_INFINITY {
                continue;
            }
            let score = best[i] + cohesion(i, j) - config.penalty;
            if score > best[j] {
                best[j] = score;
                back[j] = i;
            }
        }
    }
    let mut cuts = Vec::new();
    let mut j = n;
    while j > 0 {
        let i = back[j];
        if i > 0 {
            cuts.push(i);
        }
        j = i;
    }
    cuts.reverse();
    super::semantic::topic_shifts(cuts)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::{Timestamp, segment::test_support::check_boundaries};

    fn messages(vectors: &[Vec<f32>], roles: impl Fn(usize) -> Role) -> Vec<SegmentMessage<'_>> {
        vectors
            .iter()
            .enumerate()
            .map(|(i, v)| SegmentMessage {
                role: roles(i),
                content: "",
                timestamp: Timestamp(0),
                tokens: 1,
                embedding: Some(v),
            })
            .collect()
    }

    fn alternating(i: usize) -> Role {
        if i.is_multiple_of(2) { Role::User } else { Role::Assistant }
    }

    #[test]
    fn three_topics_three_segments() {
        let mut vs = vec![vec![1.0, 0.0, 0.0]; 4];
        vs.extend(vec![vec![0.0, 1.0, 0.0]; 4]);
        vs.extend(vec![vec![0.0, 0.0, 1.0]; 4]);
        let config = CohesionConfig { enabled: true, ..Default::default() };
        let b = cohesion_boundaries(&messages(&vs, alternating), &config);
        assert_eq!(b.iter().map(|b| b.index).collect::<Vec<_>>(), [4, 8]);
        // One topic: nothing to gain from a split.
        let same = vec![vec![1.0f32, 0.0, 0.0]; 12];
        assert!(cohesion_boundaries(&messages(&same, alternating), &config).is_empty());
    }

    #[test]
    fn cuts_move_to_user_turns() {
        // The shift is at 5, an assistant turn.
        let mut vs = vec![vec![1.0, 0.0]; 5];
        vs.extend(vec![vec![0.0, 1.0]; 7]);
        let users = CohesionConfig { enabled: true, ..Default::default() };
        let b = cohesion_boundaries(&messages(&vs, alternating), &users);
        assert!(!b.is_empty() && b.iter().all(|b| b.index % 2 == 0), "{b:?}");
        let anyone = CohesionConfig { user_turns_only: false, ..users };
        let b = cohesion_boundaries(&messages(&vs, alternating), &anyone);
        assert_eq!(b.iter().map(|b| b.index).collect::<Vec<_>>(), [5]);
    }

    proptest! {
        #[test]
        fn boundaries_are_valid(
            raw in prop::collection::vec(prop::collection::vec(-1.0f32..1.0, 3), 0..40),
            penalty in 0.0f64..3.0,
            user_turns_only in any::<bool>(),
        ) {
            let config = CohesionConfig { enabled: true, penalty, user_turns_only };
            let msgs = messages(&raw, alternating);
            let b = cohesion_boundaries(&msgs, &config);
            check_boundaries(msgs.len(), &b)?;
            if user_turns_only {
                prop_assert!(b.iter().all(|b| b.index % 2 == 0));
            }
        }
    }
}
