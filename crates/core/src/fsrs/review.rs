//! Review ≠ retrieval: a recall only records what it returned; later, against the conversation
//! that followed, each returned memory is rated, and only that moves its memory strength.

use serde::{Deserialize, Serialize};

use crate::{EpisodeId, FsrsState, Timestamp, telling::KeywordBag};

/// A recall waiting to be reviewed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingReview {
    pub query: String,
    pub memory_ids: Vec<EpisodeId>,
    /// Conversation time of the recall.
    pub at: Timestamp,
}

/// How useful a recalled memory turned out to be (FSRS's four grades).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rating {
    /// Not used at all: noise.
    Again,
    /// Related, but it took inference to connect it.
    Hard,
    /// Directly relevant; it visibly shaped what followed.
    Good,
    /// What followed could not have gone on without it.
    Easy,
}

impl Rating {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Again => "again",
            Self::Hard => "hard",
            Self::Good => "good",
            Self::Easy => "easy",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Again, Self::Hard, Self::Good, Self::Easy]
            .into_iter()
            .find(|r| r.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

/// One memory to review: every query that returned it, and when it was last returned.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewItem {
    pub id: EpisodeId,
    pub queries: Vec<String>,
    /// The latest recall that returned it: the review happens at this conversation time.
    pub at: Timestamp,
}

/// The pending reviews gathered per memory, in the order memories were first returned.
pub fn aggregate_reviews(reviews: &[PendingReview]) -> Vec<ReviewItem> {
    let mut items: Vec<ReviewItem> = Vec::new();
    for review in reviews {
        for id in &review.memory_ids {
            let item = match items.iter_mut().find(|item| item.id == *id) {
                Some(item) => item,
                None => {
                    items.push(ReviewItem { id: id.clone(), queries: Vec::new(), at: review.at });
                    items.last_mut().expect("just pushed")
                }
            };
            if !item.queries.contains(&review.query) {
                item.queries.push(review.query.clone());
            }
            item.at = item.at.max(review.at);
        }
    }
    items
}

/// Whether a memory in `state` may be reviewed at `at`: not before its last review (a stale
/// review, overtaken by a newer one) and not within `min_interval_ms` of it (conversation
/// time), so a memory recalled all day is strengthened once, not on every turn.
pub fn may_review(state: &FsrsState, at: Timestamp, min_interval_ms: i64) -> bool {
    state.last_review.is_none_or(|last| at.since(last) >= min_interval_ms.max(1))
}

/// The LLM-free rating: a memory whose content words (at least two of them, or all of a shorter
/// list) come back in the conversation that followed was used (`Good`); otherwise there is no
/// evidence either way and it is not rated (`None`), since punishing a memory on a guess would
/// bury it.
pub fn rate_by_use(memory: &[String], following: &[&str]) -> Option<Rating> {
    let memory = KeywordBag::from_text(&memory.join(" "));
    let mut said = KeywordBag::default();
    for text in following {
        said.merge(&KeywordBag::from_text(text));
    }
    let used = memory.intersection_len(&said);
    (used > 0 && used >= memory.len().min(2)).then_some(Rating::Good)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review(query: &str, ids: &[&str], at: i64) -> PendingReview {
        PendingReview {
            query: query.into(),
            memory_ids: ids.iter().map(|id| EpisodeId((*id).into())).collect(),
            at: Timestamp(at),
        }
    }

    #[test]
    fn reviews_are_gathered_per_memory_with_their_queries() {
        let items = aggregate_reviews(&[
            review("lisbon trip", &["a", "b"], 10),
            review("travel card", &["b"], 30),
            review("lisbon trip", &["b", "c"], 20),
        ]);
        let got: Vec<(&str, Vec<&str>, i64)> = items
            .iter()
            .map(|i| (i.id.0.as_str(), i.queries.iter().map(String::as_str).collect(), i.at.0))
            .collect();
        assert_eq!(
            got,
            [
                ("a", vec!["lisbon trip"], 10),
                ("b", vec!["lisbon trip", "travel card"], 30),
                ("c", vec!["lisbon trip"], 20)
            ]
        );
    }

    #[test]
    fn a_memory_is_reviewed_at_most_once_per_interval_and_never_back_in_time() {
        let day = 86_400_000;
        let reviewed = FsrsState { last_review: Some(Timestamp(10 * day)), ..FsrsState::default() };
        assert!(may_review(&FsrsState::default(), Timestamp(0), day));
        assert!(!may_review(&reviewed, Timestamp(10 * day + day / 2), day), "same day");
        assert!(!may_review(&reviewed, Timestamp(9 * day), day), "stale");
        assert!(may_review(&reviewed, Timestamp(11 * day), day));
    }

    #[test]
    fn a_memory_whose_words_come_back_was_used() {
        let memory: Vec<String> = ["sintra", "travel", "card"].map(String::from).to_vec();
        assert_eq!(
            rate_by_use(&memory, &["So the travel card covers the Sintra train?"]),
            Some(Rating::Good)
        );
        assert_eq!(rate_by_use(&memory, &["What about dinner tonight?"]), None);
        assert_eq!(rate_by_use(&memory, &["a card for the gym"]), None, "one word is chance");
        assert_eq!(rate_by_use(&[], &["anything"]), None);
    }

    #[test]
    fn ratings_read_their_names() {
        assert_eq!(Rating::parse(" Easy "), Some(Rating::Easy));
        assert_eq!(Rating::parse("medium"), None);
    }
}
