//! Intent-keyword segmentation: a user prompt that shares too few keywords with the episode so
//! far starts a new episode. Terse prompts ("ok push", "5,6") answer the agent and continue.

use serde::{Deserialize, Serialize};

use super::{
    Boundary, BoundaryReason, OverlapMeasure, SegmentMessage, Strength,
    cues::{PromptCue, prompt_cue},
};
use crate::{
    Role, Timestamp,
    telling::KeywordBag,
    telling::keywords::{GrowingBag, word_count},
    work::closes_work,
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IntentConfig {
    pub enabled: bool,
    /// A prompt whose Jaccard similarity to the episode's keyword bag is below this starts a
    /// new episode.
    pub threshold: f64,
    /// Prompts with fewer words than this continue the episode whatever they say.
    pub min_words: usize,
    /// After a silence of at least this long the bar for a shift is lowered...
    pub long_gap_minutes: i64,
    /// ...by cutting below this similarity instead of `threshold`: after sleeping on it, a
    /// user is more likely to have moved on than after thirty seconds.
    pub threshold_after_gap: f64,
    /// Whether the other messages of the episode (the agent's replies, terse prompts) add
    /// their keywords to the episode's bag. Prompts often pick up the reply's words
    /// ("which test fails?" → "test_refund_webhook fails"), not the previous prompt's.
    pub bag_includes_replies: bool,
    /// Run only when messages carry no embeddings: the embedding segmenters read the same
    /// signal, better.
    pub only_without_embeddings: bool,
}

impl Default for IntentConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            threshold: 0.15,
            min_words: 5,
            long_gap_minutes: 30,
            threshold_after_gap: 0.30,
            bag_includes_replies: true,
            only_without_embeddings: true,
        }
    }
}

/// Boundaries at user prompts whose keywords drift from the growing episode bag.
pub fn intent_boundaries(messages: &[SegmentMessage<'_>], config: &IntentConfig) -> Vec<Boundary> {
    let rules = PromptRules {
        measure: OverlapMeasure::Jaccard,
        threshold: config.threshold,
        threshold_after_gap: config.threshold_after_gap,
        long_gap_ms: config.long_gap_minutes * Timestamp::MINUTE_MS,
        min_words: config.min_words,
        bag_includes_replies: config.bag_includes_replies,
        last_reply_counts: false,
        commit_closes: false,
        discourse_cues: false,
    };
    prompt_boundaries(messages, &rules)
}

/// How user prompts are weighed against the episode so far; the intent segmenter (chats
/// without embeddings) and the work-unit segmenter (agent sessions) differ only in these.
pub(super) struct PromptRules {
    pub(super) measure: OverlapMeasure,
    /// A prompt less similar than this opens a new episode...
    pub(super) threshold: f64,
    /// ...or than this, after a silence of `long_gap_ms`.
    pub(super) threshold_after_gap: f64,
    pub(super) long_gap_ms: i64,
    /// Prompts with fewer words continue the episode whatever they say.
    pub(super) min_words: usize,
    /// The other messages (replies, terse prompts) add their keywords to the bag.
    pub(super) bag_includes_replies: bool,
    /// When they do not, a prompt is still weighed against the agent's reply it follows (its
    /// `assistant` messages since the last prompt, not tool output): users answer what they
    /// just read ("Makes sense, apply the fix" after "The fix is to ...").
    pub(super) last_reply_counts: bool,
    /// A successful `git commit` resolves the episode: the next prompt opens another.
    pub(super) commit_closes: bool,
    /// A prompt's discourse markers decide before its keywords: "Also ...", "Do that" go on,
    /// "Unrelated: ..." opens another episode.
    pub(super) discourse_cues: bool,
}

/// Boundaries at the user prompts that `rules` say open a new episode.
pub(super) fn prompt_boundaries(
    messages: &[SegmentMessage<'_>],
    rules: &PromptRules,
) -> Vec<Boundary> {
    let mut out = Vec::new();
    let mut bag = GrowingBag::default();
    let mut reply = GrowingBag::default();
    let mut committed = false;
    for (i, m) in messages.iter().enumerate() {
        if rules.commit_closes && m.role == Role::Tool && closes_work(m.content) {
            committed = true;
        }
        if rules.last_reply_counts && m.role == Role::Assistant {
            reply.add_text(m.content);
        }
        // The agent's reply this prompt follows (a terse prompt ends it too).
        let replied =
            if m.role == Role::User { std::mem::take(&mut reply) } else { GrowingBag::default() };
        if m.role != Role::User || word_count(m.content) < rules.min_words {
            if rules.bag_includes_replies && !bag.is_empty() {
                bag.add_text(m.content);
            }
            continue;
        }
        let prompt = KeywordBag::from_text(m.content);
        if prompt.is_empty() {
            continue;
        }
        if bag.is_empty() {
            bag.reset_to(&prompt);
            committed = false;
            continue;
        }
        let cue = if rules.discourse_cues { prompt_cue(m.content) } else { PromptCue::Silent };
        let shifts = match cue {
            PromptCue::Shifts => true,
            PromptCue::Continues => false,
            PromptCue::Silent => {
                let gap = m.timestamp.since(messages[i - 1].timestamp);
                let threshold = if gap >= rules.long_gap_ms {
                    rules.threshold_after_gap
                } else {
                    rules.threshold
                };
                let similarity = match rules.measure {
                    OverlapMeasure::Containment => bag.containment_with(&replied, &prompt),
                    OverlapMeasure::Jaccard => bag.jaccard(&prompt),
                };
                similarity < threshold
            }
        };
        let reason = if committed {
            BoundaryReason::Commit
        } else if shifts {
            BoundaryReason::IntentShift
        } else {
            bag.add(&prompt);
            continue;
        };
        out.push(Boundary { index: i, reason, strength: Strength::Soft });
        bag.reset_to(&prompt);
        committed = false;
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::segment::test_support::*;

    fn cuts(msgs: &[OwnedMessage]) -> Vec<usize> {
        let views: Vec<_> = msgs.iter().map(OwnedMessage::view).collect();
        intent_boundaries(&views, &IntentConfig::default()).iter().map(|b| b.index).collect()
    }

    #[test]
    fn ok_push_continues_and_a_new_question_opens_an_episode() {
        // From the nmem work-unit ADR: "ok push" answers the agent; 74 s later the user
        // asks about something else entirely.
        let msgs = dialogue(&[
            (Role::User, "please add the cargo test failures to the workspace claude.md", 0),
            (Role::Assistant, "Added the failing cargo tests to the workspace notes.", 20),
            (Role::User, "ok push", 60),
            (Role::Assistant, "Pushed.", 70),
            (
                Role::User,
                "so what signals are we trying to detect again, this list will probably grow",
                144,
            ),
        ]);
        assert_eq!(cuts(&msgs), [4]);
    }

    #[test]
    fn terse_selection_continues_the_episode() {
        // "5,6" picks options the agent offered: a continuation by definition.
        let msgs = dialogue(&[
            (Role::User, "list the extractor improvements we could make for tool failures", 0),
            (
                Role::Assistant,
                "1. retries 2. timeouts 3. logging 4. metrics 5. responses 6. errors",
                30,
            ),
            (Role::User, "5,6", 90),
            (Role::User, "yes", 95),
            (Role::User, "do it", 100),
        ]);
        assert!(cuts(&msgs).is_empty());
    }

    #[test]
    fn a_long_gap_lowers_the_bar_for_a_shift() {
        // OverlapMeasure 2/8 = 0.25: above the normal cut-off, below the after-gap one.
        let base = "garden tomato watering schedule plan";
        let next = "tomato garden recipe dinner party";
        let quick = dialogue(&[(Role::User, base, 0), (Role::User, next, 60)]);
        let after_gap = dialogue(&[(Role::User, base, 0), (Role::User, next, 3_600)]);
        assert!(cuts(&quick).is_empty());
        assert_eq!(cuts(&after_gap), [1]);
    }

    proptest! {
        #[test]
        fn boundaries_are_valid_and_only_at_long_user_prompts(msgs in conversation(60)) {
            let views: Vec<_> = msgs.iter().map(OwnedMessage::view).collect();
            let config = IntentConfig::default();
            let b = intent_boundaries(&views, &config);
            check_boundaries(views.len(), &b)?;
            for b in &b {
                let m = views[b.index];
                prop_assert_eq!(m.role, Role::User);
                prop_assert!(word_count(m.content) >= config.min_words);
            }
        }
    }
}
