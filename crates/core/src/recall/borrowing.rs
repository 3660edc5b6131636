//! Neighbour borrowing, the one rule both search indexes score a message's vector by: a
//! message scores `max(own, before · previous, after · next)`, so an answer that shares no word
//! with a query rises behind the question that does. Its neighbours are the messages right
//! before and after it in its conversation: in its episode, or across an episode's edge when
//! the silence between the two episodes is at most `max_gap_ms`. Each index finds the
//! neighbours as suits its storage and asks this rule for the score.

use std::ops::Mul;

use crate::recall::RankingConfig;

/// How much of its neighbours' similarity a message borrows.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Borrow {
    /// The share of the similarity of the message before it.
    pub before: f64,
    /// The share of the similarity of the message after it.
    pub after: f64,
    pub max_gap_ms: i64,
}

/// A similarity as an index keeps it: `f32` in the embedded index's scan, `f64` elsewhere.
pub trait Similarity: Copy + PartialOrd + Mul<Output = Self> {
    fn from_share(share: f64) -> Self;
}

impl Similarity for f32 {
    fn from_share(share: f64) -> Self {
        share as f32
    }
}

impl Similarity for f64 {
    fn from_share(share: f64) -> Self {
        share
    }
}

impl Borrow {
    /// The borrowing the ranking settings ask for.
    pub fn of(config: &RankingConfig) -> Self {
        let [before, after] = config.vector_neighbor_weights;
        Self { before, after, max_gap_ms: (config.neighbor_max_gap_minutes * 60_000.0) as i64 }
    }

    /// Whether two consecutive messages of a conversation are neighbours: in one episode, or
    /// `gap_ms` apart from the end of the first's episode to the start of the second's.
    pub fn adjacent(&self, same_episode: bool, gap_ms: i64) -> bool {
        same_episode || gap_ms <= self.max_gap_ms
    }

    /// What the neighbour before a message, of similarity `previous`, lends it; nothing when
    /// borrowing from before is off.
    pub fn from_before<S: Similarity>(&self, previous: S) -> Option<S> {
        (self.before > 0.0).then(|| S::from_share(self.before) * previous)
    }

    /// What the neighbour after a message, of similarity `next`, lends it.
    pub fn from_after<S: Similarity>(&self, next: S) -> Option<S> {
        (self.after > 0.0).then(|| S::from_share(self.after) * next)
    }

    /// Whether any borrowing is on (an index can skip finding neighbours when it is not).
    pub fn lends(&self) -> bool {
        self.before > 0.0 || self.after > 0.0
    }
}

/// A message's score: its own similarity, or what a neighbour lends it, whichever is more.
pub fn borrowed<S: Similarity>(own: S, lent: impl IntoIterator<Item = Option<S>>) -> S {
    lent.into_iter().flatten().fold(own, |best, s| if s > best { s } else { best })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BORROW: Borrow = Borrow { before: 0.8, after: 0.6, max_gap_ms: 1000 };

    #[test]
    fn a_message_scores_its_own_similarity_or_what_a_neighbour_lends_whichever_is_more() {
        let lent = |previous: f64, next: f64| {
            borrowed(0.3, [BORROW.from_before(previous), BORROW.from_after(next)])
        };
        assert_eq!(lent(0.1, 0.1), 0.3);
        assert!((lent(0.9, 0.1) - 0.72).abs() < 1e-12, "{}", lent(0.9, 0.1));
        assert!((lent(0.1, 0.9) - 0.54).abs() < 1e-12);
        assert_eq!(borrowed(0.3f32, [None, None]), 0.3);
    }

    #[test]
    fn neighbours_cross_an_episodes_edge_only_after_a_short_silence() {
        assert!(BORROW.adjacent(true, i64::MAX));
        assert!(BORROW.adjacent(false, 1000));
        assert!(!BORROW.adjacent(false, 1001));
    }

    #[test]
    fn a_share_of_zero_lends_nothing() {
        let off = Borrow { before: 0.0, after: 0.6, max_gap_ms: 0 };
        assert_eq!(off.from_before(1.0f32), None);
        assert_eq!(off.from_after(1.0f32), Some(0.6));
        assert!(off.lends() && !Borrow::default().lends());
    }
}
