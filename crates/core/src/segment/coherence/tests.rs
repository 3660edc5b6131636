use proptest::prelude::*;

use super::*;
use crate::{Timestamp, segment::test_support::check_boundaries};

fn messages<'a>(vectors: &'a [Vec<f32>], texts: &'a [String]) -> Vec<SegmentMessage<'a>> {
    vectors
        .iter()
        .zip(texts)
        .enumerate()
        .map(|(i, (v, t))| SegmentMessage {
            role: if i % 2 == 0 { Role::User } else { Role::Assistant },
            content: t,
            timestamp: Timestamp(0),
            tokens: 1,
            embedding: Some(v),
        })
        .collect()
}

fn texts(n: usize, subject: impl Fn(usize) -> &'static str) -> Vec<String> {
    (0..n).map(|i| format!("a full message about {} number {i} today", subject(i))).collect()
}

/// Twelve messages, about trains and then, from `shift` on, about gardens.
fn two_subjects(shift: usize) -> (Vec<Vec<f32>>, Vec<String>) {
    let vectors =
        (0..12).map(|i| if i < shift { vec![1.0, 0.1, 0.0] } else { vec![0.0, 0.1, 1.0] });
    (vectors.collect(), texts(12, |i| if i < shift { "trains" } else { "gardens" }))
}

/// `texts` with message `at` replaced by `text`.
fn replaced(texts: &[String], at: usize, text: &str) -> Vec<String> {
    let mut out = texts.to_vec();
    out[at] = text.to_owned();
    out
}

/// The default model's probability at gap `gap` (before message `gap + 1`).
fn probability_at(vectors: &[Vec<f32>], texts: &[String], gap: usize) -> f64 {
    gap_probabilities(&messages(vectors, texts), &CoherenceWeights::default()).unwrap()[gap]
}

#[test]
fn cuts_where_the_subject_changes_and_only_there() {
    let (vs, t) = two_subjects(6);
    let b = coherence_boundaries(&messages(&vs, &t), &CoherenceConfig::default());
    assert_eq!(b.iter().map(|b| b.index).collect::<Vec<_>>(), [6]);
    let same = vec![vec![1.0f32, 0.1, 0.0]; 12];
    let t = texts(12, |_| "trains");
    assert!(coherence_boundaries(&messages(&same, &t), &CoherenceConfig::default()).is_empty());
}

#[test]
fn only_user_messages_of_enough_words_open_an_episode() {
    // The shift is at 5, the assistant's turn: it moves to the user's next message or goes.
    let (vs, t) = two_subjects(5);
    let b = coherence_boundaries(&messages(&vs, &t), &CoherenceConfig::default());
    assert!(b.iter().all(|b| b.index % 2 == 0), "{b:?}");
    // A terse opener never opens one.
    let (vs, mut t) = two_subjects(6);
    t[6] = "ok then".to_owned();
    let b = coherence_boundaries(&messages(&vs, &t), &CoherenceConfig::default());
    assert!(b.iter().all(|b| b.index != 6), "{b:?}");
}

#[test]
fn an_answer_stays_with_its_question() {
    // The same gap, once after a statement and once after a question.
    let mut vs = vec![vec![1.0, 0.3, 0.0]; 6];
    vs.extend(vec![vec![0.2, 0.3, 1.0]; 6]);
    let statement = texts(12, |_| "trains");
    let question = replaced(&statement, 5, "what about the trains to the coast?");
    let p = |t: &[String]| probability_at(&vs, t, 5);
    assert!(p(&question) < p(&statement), "{} vs {}", p(&question), p(&statement));
}

#[test]
fn lengths_count_against_what_each_speaker_usually_writes() {
    // Answers forty times longer than the questions, as in a technical chat, move no gap: each
    // speaker is measured against their own usual length.
    let (vs, t) = two_subjects(6);
    let mut long = t.clone();
    for answer in long.iter_mut().skip(1).step_by(2) {
        answer.push_str(&" with the full stack trace and every line of the fix".repeat(30));
    }
    let lengths = |t: &[String]| -> Vec<(f64, f64)> {
        let features = gap_features(&messages(&vs, t)).unwrap();
        features.iter().map(|f| (f.opener_length, f.previous_length)).collect()
    };
    assert!(lengths(&long).iter().all(|&(o, p)| o.abs() < 1e-9 && p.abs() < 1e-9));
    assert_eq!(lengths(&t), lengths(&long));
    // A follow-up shorter than its asker's questions is less likely to open an episode than a
    // question of the usual length at the same gap.
    let follow_up = replaced(&t, 8, "and the garden one too?");
    let p = |t: &[String]| probability_at(&vs, t, 7);
    assert!(p(&follow_up) < p(&t), "{} vs {}", p(&follow_up), p(&t));
}

#[test]
fn needs_every_embedding() {
    let vs = vec![vec![1.0f32, 0.0]; 6];
    let t = texts(6, |_| "trains");
    let mut msgs = messages(&vs, &t);
    msgs[3].embedding = None;
    assert!(coherence_boundaries(&msgs, &CoherenceConfig::default()).is_empty());
    assert!(gap_features(&msgs).is_none());
}

proptest! {
    #[test]
    fn boundaries_are_valid(
        raw in prop::collection::vec(prop::collection::vec(-1.0f32..1.0, 4), 0..40),
        threshold in 0.0f64..1.0,
        min_gap in 1usize..4,
    ) {
        let t = texts(raw.len(), |_| "things");
        let msgs = messages(&raw, &t);
        let config = CoherenceConfig { threshold, min_gap, ..Default::default() };
        let b = coherence_boundaries(&msgs, &config);
        check_boundaries(msgs.len(), &b)?;
        prop_assert!(b.iter().all(|b| b.index % 2 == 0));
        for w in b.windows(2) {
            prop_assert!(w[1].index - w[0].index >= min_gap);
        }
        let p = gap_probabilities(&msgs, &config.weights).unwrap_or_default();
        prop_assert_eq!(p.len(), msgs.len().saturating_sub(1));
        prop_assert!(p.iter().all(|p| (0.0..=1.0).contains(p)));
    }
}
