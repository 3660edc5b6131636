//! How surprising an episode's opening is, read from the signal that cuts episodes: how
//! little the messages just before its first one resemble its first messages.
//!
//! One signal for both keeps them honest with each other: a cut the segmenter was sure of is
//! a surprising opening, an episode that began only because a window filled up is not.

use crate::{telling::KeywordBag, telling::keywords::jaccard};

use super::{SegmentMessage, embeddings, tiling::window_cosine};

/// The surprise of an episode that opens at `messages[start]`, in `0.0..=1.0`: one minus the
/// similarity of the `window` messages on each side of it (cosine of their summed embeddings
/// when all of them have one, as the semantic segmenter compares them; else the Jaccard
/// similarity of their keywords, as the intent segmenter does). Nothing before it: 0.
///
/// `messages` may begin with closed messages kept as context, so that an episode which opens a
/// batch is still measured against what came before it.
pub fn opening_surprise(messages: &[SegmentMessage<'_>], start: usize, window: usize) -> f64 {
    if start == 0 || start >= messages.len() {
        return 0.0;
    }
    let window = window.max(1);
    let before = &messages[start.saturating_sub(window)..start];
    let after = &messages[start..(start + window).min(messages.len())];
    let similarity = match (embeddings(before), embeddings(after)) {
        (Some(b), Some(a)) => window_cosine(&b, &a),
        _ => jaccard(&keywords(before), &keywords(after)),
    };
    (1.0 - similarity).clamp(0.0, 1.0)
}

fn keywords(messages: &[SegmentMessage<'_>]) -> KeywordBag {
    let mut bag = KeywordBag::default();
    for m in messages {
        bag.merge(&KeywordBag::from_text(m.content));
    }
    bag
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::{Role, Timestamp};

    fn message<'a>(content: &'a str, embedding: Option<&'a [f32]>) -> SegmentMessage<'a> {
        SegmentMessage { role: Role::User, content, timestamp: Timestamp(0), tokens: 1, embedding }
    }

    #[test]
    fn a_new_subject_is_surprising_and_more_of_the_same_is_not() {
        let (a, b) = ([1.0f32, 0.1, 0.0], [0.0f32, 0.1, 1.0]);
        let msgs: Vec<_> = [&a, &a, &b, &b].iter().map(|v| message("", Some(&v[..]))).collect();
        assert!(opening_surprise(&msgs, 2, 2) > 0.9, "orthogonal windows");
        assert!(opening_surprise(&msgs, 1, 1) < 1e-9, "the same vector again");
        assert_eq!(opening_surprise(&msgs, 0, 2), 0.0, "nothing came before");
    }

    #[test]
    fn without_embeddings_the_words_decide() {
        let msgs = [
            message("tomato seedlings look leggy on the balcony", None),
            message("repot the tomato seedlings deeper", None),
            message("book a train ticket to Paris", None),
        ];
        let same = opening_surprise(&msgs, 1, 1);
        let new = opening_surprise(&msgs, 2, 1);
        assert!(new > same, "{new} > {same}");
        assert_eq!(new, 1.0, "no word in common");
    }

    proptest! {
        #[test]
        fn surprise_is_a_fraction(
            raw in prop::collection::vec(prop::collection::vec(-1.0f32..1.0, 3), 1..20),
            start in 0usize..25,
            window in 0usize..4,
        ) {
            let msgs: Vec<_> = raw.iter().map(|v| message("", Some(v))).collect();
            let s = opening_surprise(&msgs, start, window);
            prop_assert!((0.0..=1.0).contains(&s));
        }
    }
}
