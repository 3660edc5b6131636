//! Work units of a coding agent's session: the user declares them. A prompt whose keywords
//! drift from the work unit's (its prompts' keywords, not the tools' output) opens a new one,
//! terse prompts continue it, and a commit resolves it (the next real prompt opens another).

use serde::{Deserialize, Serialize};

use super::{
    Boundary, BudgetConfig, SegmentMessage,
    intent::{PromptRules, prompt_boundaries},
};
use crate::{Role, Timestamp};

/// How a session in which an agent acted (a batch holding `tool` messages) is cut.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkConfig {
    /// Cut agent sessions by the user's intents; off, they are cut like any conversation.
    pub enabled: bool,
    /// How a prompt is compared with the work unit's prompt keywords.
    pub measure: OverlapMeasure,
    /// A prompt less similar than this opens a new work unit.
    pub threshold: f64,
    /// Prompts with fewer words continue the work unit ("ok push", "5,6", "yes").
    pub min_words: usize,
    /// After this long without a message...
    pub long_gap_minutes: i64,
    /// ...a prompt needs this much similarity to continue (a higher bar: after a break the
    /// user has more likely moved on; the silence alone is never a boundary).
    pub threshold_after_gap: f64,
    /// A prompt is weighed against the agent's reply just before it too (not its tool
    /// output): "Makes sense, apply the fix" continues the unit whose reply said what the fix
    /// is.
    pub last_reply_counts: bool,
    /// A prompt's own markers decide before its keywords: one that goes on with the task
    /// ("Also ...", "Do that", "Yes, ...", "... too") continues the unit, one that announces
    /// another ("Unrelated: ...", "Let's switch to ...") opens a new one. English markers only.
    pub discourse_cues: bool,
    /// A successful `git commit` resolves the work unit: the next prompt that is not terse
    /// opens another.
    pub commit_closes: bool,
    /// Work units are longer than chats' episodes (every tool call is a message): the cap on
    /// each unit's tokens and messages.
    pub budget: BudgetConfig,
}

/// How alike a prompt and the work unit so far are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OverlapMeasure {
    /// The share of the prompt's keywords the unit's prompts already used. The unit's bag
    /// grows with every prompt; this does not shrink as it grows.
    Containment,
    /// Jaccard similarity of the prompt and the unit's bag (nmem's rule). The union grows with
    /// the bag, so after two or three prompts a follow-up that reuses half the unit's words
    /// scores under 0.3 and is cut: every prompt of a feature session becomes its own unit
    /// (see the tests).
    Jaccard,
}

impl Default for WorkConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            measure: OverlapMeasure::Containment,
            threshold: 0.2,
            min_words: 5,
            long_gap_minutes: 30,
            threshold_after_gap: 0.6,
            last_reply_counts: true,
            discourse_cues: true,
            commit_closes: true,
            budget: BudgetConfig { enabled: true, max_tokens: 16_000, max_messages: 200 },
        }
    }
}

/// Whether `messages` are an agent's work: some of them are its tool actions.
pub fn is_agent_work(messages: &[SegmentMessage<'_>]) -> bool {
    messages.iter().any(|m| m.role == Role::Tool)
}

/// Boundaries at the user prompts that open a new work unit.
pub fn work_boundaries(messages: &[SegmentMessage<'_>], config: &WorkConfig) -> Vec<Boundary> {
    let rules = PromptRules {
        measure: config.measure,
        threshold: config.threshold,
        threshold_after_gap: config.threshold_after_gap,
        long_gap_ms: config.long_gap_minutes * Timestamp::MINUTE_MS,
        min_words: config.min_words,
        // The unit's words are its user's: tool output would swamp them. The agent's last
        // reply is what the next prompt answers.
        bag_includes_replies: false,
        last_reply_counts: config.last_reply_counts,
        commit_closes: config.commit_closes,
        discourse_cues: config.discourse_cues,
    };
    prompt_boundaries(messages, &rules)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::{BoundaryReason, segment::test_support::*, telling::keywords::word_count};

    fn cuts(msgs: &[OwnedMessage]) -> Vec<(usize, BoundaryReason)> {
        let views: Vec<_> = msgs.iter().map(OwnedMessage::view).collect();
        work_boundaries(&views, &WorkConfig::default())
            .iter()
            .map(|b| (b.index, b.reason))
            .collect()
    }

    /// Where `config` cuts `msgs`.
    fn cut_at(msgs: &[OwnedMessage], config: &WorkConfig) -> Vec<usize> {
        let views: Vec<_> = msgs.iter().map(OwnedMessage::view).collect();
        work_boundaries(&views, config).iter().map(|b| b.index).collect()
    }

    #[test]
    fn tool_output_does_not_cut_and_a_new_intent_does() {
        let msgs = dialogue(&[
            (Role::User, "the refund webhook test fails since the merge, find out why", 0),
            (
                Role::Tool,
                "$ cargo test refund_webhook [failed]\nthread panicked: connection refused on port 8081",
                10,
            ),
            (Role::Tool, "Read src/payments/mock_server.rs", 20),
            (
                Role::Assistant,
                "The mock server binds its port asynchronously; the test connects too early.",
                30,
            ),
            (Role::User, "make the refund webhook test wait for the mock port then", 60),
            (Role::Tool, "Edit tests/refund_webhook.rs", 70),
            (Role::User, "ok run it", 80),
            // Long enough, but without a word that says what it is about: it continues.
            (Role::User, "could you do that for me now", 90),
            (Role::User, "now add a dark mode toggle to the settings page", 200),
        ]);
        assert_eq!(cuts(&msgs), [(8, BoundaryReason::IntentShift)]);
    }

    #[test]
    fn a_prompt_taking_up_the_agents_last_reply_continues_the_unit() {
        let msgs = dialogue(&[
            (Role::User, "the crash test flush_survives_kill is flaky on CI, look into it", 0),
            (
                Role::Tool,
                "$ cargo test flush_survives_kill\nassertion failed: left: 3 right: 4",
                10,
            ),
            (
                Role::Assistant,
                "The child prints committed before the WAL checkpoint; the fix is to print \
                     after the commit returns.",
                30,
            ),
            // Of its keywords (make, sense, apply, fix, crash, test), "fix" is only the
            // reply's: with the unit's two, half of them.
            (Role::User, "Makes sense, apply that fix to the crash test", 60),
            (Role::Tool, "Edit crates/engine/tests/it/crash.rs", 70),
            (Role::Assistant, "Fixed: 50 runs in a row pass.", 80),
            // The reply before it says nothing of what this asks for.
            (Role::User, "now rewrite the install section of the README without usearch", 120),
        ]);
        // Its "that" says as much: the keywords alone are weighed here, at a bar (0.4) that
        // the unit's two keywords of six miss.
        let keywords_only =
            WorkConfig { discourse_cues: false, threshold: 0.4, ..WorkConfig::default() };
        assert_eq!(cut_at(&msgs, &keywords_only), [6]);
        let unit_only = WorkConfig { last_reply_counts: false, ..keywords_only };
        assert_eq!(cut_at(&msgs, &unit_only), [3, 6]);
    }

    #[test]
    fn a_follow_up_that_names_nothing_new_continues_and_an_announced_change_opens_a_unit() {
        let msgs = dialogue(&[
            (Role::User, "Write release notes for v0.4 from the commits since v0.3.", 0),
            (Role::Tool, "$ git log v0.3..main --oneline | wc -l\n47", 10),
            (Role::Assistant, "Draft: v0.4 adds the timeline view and cursor pagination.", 60),
            // Nothing in common with the request or the draft but what it points back at.
            (Role::User, "Make it friendlier and put breaking changes first.", 120),
            (Role::User, "Also mention who contributed, by name.", 180),
            // Shares "release" and "v0.4" with the unit, yet says it is something else.
            (Role::User, "Unrelated: why is the v0.4 release build so slow on CI?", 240),
        ]);
        assert_eq!(cut_at(&msgs, &WorkConfig::default()), [5]);
        let keywords_only = WorkConfig { discourse_cues: false, ..WorkConfig::default() };
        assert_eq!(cut_at(&msgs, &keywords_only), [3, 4, 5]);
    }

    #[test]
    fn an_announced_change_opens_a_unit_whatever_words_it_shares() {
        let msgs = dialogue(&[
            (Role::User, "Write the release notes for v0.4 from the commits since v0.3.", 0),
            (Role::Tool, "$ git log v0.3..main --oneline | wc -l\n47", 10),
            (
                Role::User,
                "Unrelated: the release notes page of the website lists v0.3 commits.",
                60,
            ),
        ]);
        assert_eq!(cut_at(&msgs, &WorkConfig::default()).len(), 1);
        let keywords_only = WorkConfig { discourse_cues: false, ..WorkConfig::default() };
        assert_eq!(cut_at(&msgs, &keywords_only).len(), 0);
    }

    #[test]
    fn a_commit_resolves_the_work_unit_but_a_terse_prompt_after_it_continues() {
        let msgs = dialogue(&[
            (Role::User, "fix the flaky refund webhook test in the payments crate", 0),
            (
                Role::Tool,
                "$ git commit -am 'Wait for the mock port'\n[main 3f2a1c0] Wait for the mock port",
                50,
            ),
            (Role::User, "ok push", 60),
            (Role::Tool, "$ git push", 65),
            (Role::User, "the refund webhook retries should back off exponentially too", 120),
        ]);
        assert_eq!(cuts(&msgs), [(4, BoundaryReason::Commit)]);
    }

    #[test]
    fn after_a_long_break_a_prompt_needs_more_in_common_to_continue() {
        let base = "refund webhook retry backoff payments crate";
        // Half of its keywords are the unit's: between the two bars.
        let half = "refund webhook retry logging format cleanup";
        let quick = dialogue(&[(Role::User, base, 0), (Role::User, half, 60)]);
        let later = dialogue(&[(Role::User, base, 0), (Role::User, half, 7_200)]);
        assert!(cuts(&quick).is_empty());
        assert_eq!(cuts(&later), [(1, BoundaryReason::IntentShift)]);
        let little = "refund logging format cleanup spelling typo";
        assert_eq!(cuts(&dialogue(&[(Role::User, base, 0), (Role::User, little, 60)])).len(), 1);
    }

    proptest! {
        #[test]
        fn boundaries_are_valid_and_only_at_long_user_prompts(msgs in conversation(60)) {
            let views: Vec<_> = msgs.iter().map(OwnedMessage::view).collect();
            let config = WorkConfig::default();
            let b = work_boundaries(&views, &config);
            check_boundaries(views.len(), &b)?;
            for b in &b {
                prop_assert_eq!(views[b.index].role, Role::User);
                prop_assert!(word_count(views[b.index].content) >= config.min_words);
            }
        }
    }
}
