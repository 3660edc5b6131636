//! Budget segmentation: an episode holds at most so many tokens and so many messages.

use serde::{Deserialize, Serialize};

use super::{Boundary, BoundaryReason, SegmentMessage, Strength};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BudgetConfig {
    pub enabled: bool,
    /// Tokens (cl100k) an episode may hold; one message larger than this stands alone.
    pub max_tokens: u32,
    /// Messages an episode may hold.
    pub max_messages: usize,
}

impl Default for BudgetConfig {
    fn default() -> Self {
        Self { enabled: true, max_tokens: 4_000, max_messages: 40 }
    }
}

/// Greedy cuts: a message starts a new episode when adding it would exceed the token budget
/// or the message cap of the episode so far.
pub fn budget_boundaries(messages: &[SegmentMessage<'_>], config: &BudgetConfig) -> Vec<Boundary> {
    let mut out = Vec::new();
    let (mut tokens, mut count) = (0u64, 0usize);
    for (i, m) in messages.iter().enumerate() {
        let reason = if count == 0 {
            None
        } else if tokens + u64::from(m.tokens) > u64::from(config.max_tokens) {
            Some(BoundaryReason::TokenBudget)
        } else if count >= config.max_messages {
            Some(BoundaryReason::MessageCap)
        } else {
            None
        };
        if let Some(reason) = reason {
            out.push(Boundary { index: i, reason, strength: Strength::Hard });
            tokens = 0;
            count = 0;
        }
        tokens += u64::from(m.tokens);
        count += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::segment::{segment_ranges, test_support::*};

    proptest! {
        #[test]
        fn segments_respect_the_budget(msgs in conversation(120), max_tokens in 1u32..6_000, max_messages in 1usize..50) {
            let views: Vec<_> = msgs.iter().map(OwnedMessage::view).collect();
            let config = BudgetConfig { enabled: true, max_tokens, max_messages };
            let b = budget_boundaries(&views, &config);
            check_boundaries(views.len(), &b)?;
            for r in segment_ranges(views.len(), &b) {
                let tokens: u64 = views[r.clone()].iter().map(|m| u64::from(m.tokens)).sum();
                prop_assert!(r.len() <= max_messages);
                prop_assert!(r.len() == 1 || tokens <= u64::from(max_tokens));
            }
        }
    }
}
