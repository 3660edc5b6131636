//! The default way the LLM-free segmenters are combined.

use serde::{Deserialize, Serialize};

use super::{
    Boundary, BudgetConfig, CoherenceConfig, CohesionConfig, IntentConfig, OverlapConfig,
    SegmentMessage, SemanticConfig, Strength, TimeGapConfig, WorkConfig, budget_boundaries,
    coherence_boundaries, cohesion_boundaries, gap_probabilities, intent_boundaries, is_agent_work,
    opening_surprise, segment_ranges, semantic_boundaries, time_gap_boundaries, work_boundaries,
};

/// Which segmenters run and how their proposals are merged.
///
/// Time-gap boundaries and, when messages carry embeddings, the coherence model's (by default;
/// the semantic and cohesion segmenters may be turned on beside it), else the intent
/// segmenter's, are merged first (at one position the stronger wins); a soft
/// boundary that would leave fewer than `min_segment_messages` messages since the previous
/// boundary is dropped. Every resulting segment is then cut to the budget.
///
/// A coding agent's session (the messages hold its tool actions) is cut by the user's intents
/// alone ([`WorkConfig`]): the agent's output shifts vocabulary at every tool call, and a pause
/// is the user reading, not a new subject.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SegmentationPolicy {
    pub min_segment_messages: usize,
    pub time_gap: TimeGapConfig,
    pub intent: IntentConfig,
    pub semantic: SemanticConfig,
    pub coherence: CoherenceConfig,
    pub cohesion: CohesionConfig,
    pub budget: BudgetConfig,
    pub overlap: OverlapConfig,
    pub work: WorkConfig,
}

impl Default for SegmentationPolicy {
    fn default() -> Self {
        Self {
            min_segment_messages: 2,
            time_gap: TimeGapConfig::default(),
            intent: IntentConfig::default(),
            semantic: SemanticConfig::default(),
            coherence: CoherenceConfig::default(),
            cohesion: CohesionConfig::default(),
            budget: BudgetConfig::default(),
            overlap: OverlapConfig::default(),
            work: WorkConfig::default(),
        }
    }
}

impl SegmentationPolicy {
    /// How surprising an episode opening at each of `messages` is, read from the signal that
    /// cuts: the coherence model's probability of a new episode there when it runs (whoever
    /// wrote the opener: a time gap may cut before any message), else how unlike the messages
    /// before it its first ones are. `messages` may begin with closed messages kept as context,
    /// so that an episode which opens a batch is still measured against what came before it.
    pub fn surprises<'m, 'a>(&self, messages: &'m [SegmentMessage<'a>]) -> Surprises<'m, 'a> {
        let probabilities = if self.coherence.enabled {
            gap_probabilities(messages, &self.coherence.weights)
        } else {
            None
        };
        Surprises { messages, probabilities, window: self.semantic.window }
    }

    /// Where new episodes begin within `messages`: sorted, distinct, in `1..len`.
    pub fn boundaries(&self, messages: &[SegmentMessage<'_>]) -> Vec<Boundary> {
        if self.work.enabled && is_agent_work(messages) {
            let kept = work_boundaries(messages, &self.work);
            return within_budget(messages, kept, &self.work.budget);
        }
        let mut proposed = Vec::new();
        if self.time_gap.enabled {
            proposed.extend(time_gap_boundaries(messages, &self.time_gap));
        }
        let embedded = !messages.is_empty() && messages.iter().all(|m| m.embedding.is_some());
        let semantic_runs =
            (self.semantic.enabled || self.coherence.enabled || self.cohesion.enabled) && embedded;
        if self.intent.enabled && !(self.intent.only_without_embeddings && semantic_runs) {
            proposed.extend(intent_boundaries(messages, &self.intent));
        }
        if embedded && self.semantic.enabled {
            proposed.extend(semantic_boundaries(messages, &self.semantic));
        }
        if embedded && self.coherence.enabled {
            proposed.extend(coherence_boundaries(messages, &self.coherence));
        }
        if embedded && self.cohesion.enabled {
            proposed.extend(cohesion_boundaries(messages, &self.cohesion));
        }
        // Stronger first at each index, so de-duplication keeps it.
        proposed.sort_by(|a, b| a.index.cmp(&b.index).then(b.strength.cmp(&a.strength)));
        proposed.dedup_by_key(|b| b.index);

        let mut kept: Vec<Boundary> = Vec::with_capacity(proposed.len());
        let mut last = 0;
        for b in proposed {
            if b.strength == Strength::Hard || b.index - last >= self.min_segment_messages {
                last = b.index;
                kept.push(b);
            }
        }
        within_budget(messages, kept, &self.budget)
    }
}

/// The surprise of an episode opening at each message of a batch; see
/// [`SegmentationPolicy::surprises`].
#[derive(Debug)]
pub struct Surprises<'m, 'a> {
    messages: &'m [SegmentMessage<'a>],
    /// The coherence model's probability at each gap, when it is what cuts.
    probabilities: Option<Vec<f64>>,
    window: usize,
}

impl Surprises<'_, '_> {
    /// The surprise of an episode that opens at `messages[start]`, in `0.0..=1.0`; nothing
    /// before it: 0.
    pub fn at(&self, start: usize) -> f64 {
        if start == 0 || start >= self.messages.len() {
            return 0.0;
        }
        match &self.probabilities {
            Some(p) => p[start - 1],
            None => opening_surprise(self.messages, start, self.window),
        }
    }
}

/// `kept` and the cuts that keep every segment within `budget`.
fn within_budget(
    messages: &[SegmentMessage<'_>],
    kept: Vec<Boundary>,
    budget: &BudgetConfig,
) -> Vec<Boundary> {
    if !budget.enabled {
        return kept;
    }
    let mut out = Vec::with_capacity(kept.len());
    for (range, opening) in segment_ranges(messages.len(), &kept)
        .into_iter()
        .zip(std::iter::once(None).chain(kept.iter().copied().map(Some)))
    {
        out.extend(opening);
        let offset = range.start;
        out.extend(
            budget_boundaries(&messages[range], budget)
                .into_iter()
                .map(|b| Boundary { index: b.index + offset, ..b }),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::{BoundaryReason, segment::test_support::*};

    proptest! {
        #[test]
        fn composed_boundaries_are_valid(msgs in conversation(150)) {
            let views: Vec<_> = msgs.iter().map(OwnedMessage::view).collect();
            let policy = SegmentationPolicy::default();
            let b = policy.boundaries(&views);
            check_boundaries(views.len(), &b)?;
            // Every hard time gap survives composition.
            for hard in time_gap_boundaries(&views, &policy.time_gap)
                .into_iter()
                .filter(|b| b.strength == Strength::Hard)
            {
                prop_assert!(b.iter().any(|k| k.index == hard.index));
            }
            // And the budget holds in every segment.
            for r in segment_ranges(views.len(), &b) {
                prop_assert!(r.len() <= policy.budget.max_messages);
            }
        }

        #[test]
        fn soft_boundaries_keep_minimum_length(msgs in conversation(150)) {
            let views: Vec<_> = msgs.iter().map(OwnedMessage::view).collect();
            let policy = SegmentationPolicy { min_segment_messages: 3, ..Default::default() };
            let b = policy.boundaries(&views);
            // Budget cuts come after the merge, so distance counts from the merged boundaries.
            let mut last = 0;
            for b in b.iter().filter(|b| !matches!(b.reason, BoundaryReason::TokenBudget | BoundaryReason::MessageCap)) {
                if b.strength == Strength::Soft {
                    prop_assert!(b.index - last >= 3, "soft boundary {} too close to {}", b.index, last);
                }
                last = b.index;
            }
        }
    }

    #[test]
    fn disabled_segmenters_propose_nothing() {
        let msgs: Vec<OwnedMessage> = (0..10)
            .map(|i| OwnedMessage {
                role: crate::Role::User,
                content: format!("completely different topic number {i} here today"),
                timestamp: crate::Timestamp(i * 86_400_000),
                tokens: 1,
            })
            .collect();
        let views: Vec<_> = msgs.iter().map(OwnedMessage::view).collect();
        let all = SegmentationPolicy::default().boundaries(&views);
        assert!(all.iter().any(|b| b.reason == BoundaryReason::TimeGap));
        let none = SegmentationPolicy {
            time_gap: TimeGapConfig { enabled: false, ..Default::default() },
            intent: IntentConfig { enabled: false, ..Default::default() },
            budget: BudgetConfig { enabled: false, ..Default::default() },
            ..Default::default()
        };
        assert!(none.boundaries(&views).is_empty());
    }
}
