//! Time-gap segmentation: a long silence ends an episode.

use serde::{Deserialize, Serialize};

use super::{Boundary, BoundaryReason, SegmentMessage, Strength};
use crate::Timestamp;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TimeGapConfig {
    pub enabled: bool,
    /// A gap at least this long is a soft boundary.
    pub soft_minutes: i64,
    /// A gap longer than this is a hard boundary.
    pub hard_minutes: i64,
}

impl Default for TimeGapConfig {
    fn default() -> Self {
        Self { enabled: true, soft_minutes: 30, hard_minutes: 180 }
    }
}

/// Boundaries before every message that follows a gap of at least `soft_minutes`.
/// Out-of-order timestamps (negative gaps) never make a boundary.
pub fn time_gap_boundaries(
    messages: &[SegmentMessage<'_>],
    config: &TimeGapConfig,
) -> Vec<Boundary> {
    let soft = config.soft_minutes * Timestamp::MINUTE_MS;
    let hard = config.hard_minutes * Timestamp::MINUTE_MS;
    let mut out = Vec::new();
    for (i, pair) in messages.windows(2).enumerate() {
        let gap = pair[1].timestamp.since(pair[0].timestamp);
        let strength = if gap > hard {
            Strength::Hard
        } else if gap >= soft {
            Strength::Soft
        } else {
            continue;
        };
        out.push(Boundary { index: i + 1, reason: BoundaryReason::TimeGap, strength });
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::{Role, segment::test_support::*};

    fn at(minutes: &[i64]) -> Vec<OwnedMessage> {
        minutes
            .iter()
            .map(|&m| OwnedMessage {
                role: Role::User,
                content: String::new(),
                timestamp: Timestamp(m * Timestamp::MINUTE_MS),
                tokens: 1,
            })
            .collect()
    }

    #[test]
    fn soft_at_thirty_minutes_hard_past_three_hours() {
        let msgs = at(&[0, 29, 59, 60, 240, 421]);
        let views: Vec<_> = msgs.iter().map(OwnedMessage::view).collect();
        let b = time_gap_boundaries(&views, &TimeGapConfig::default());
        let got: Vec<_> = b.iter().map(|b| (b.index, b.strength)).collect();
        // 29 min: none; 30 min: soft; 1 min: none; 180 min: soft (not > 3 h); 181 min: hard.
        assert_eq!(got, [(2, Strength::Soft), (4, Strength::Soft), (5, Strength::Hard)]);
    }

    proptest! {
        #[test]
        fn boundaries_are_valid(msgs in conversation(60)) {
            let views: Vec<_> = msgs.iter().map(OwnedMessage::view).collect();
            let b = time_gap_boundaries(&views, &TimeGapConfig::default());
            check_boundaries(views.len(), &b)?;
            for b in &b {
                let gap = views[b.index].timestamp.since(views[b.index - 1].timestamp);
                prop_assert!(gap >= 30 * Timestamp::MINUTE_MS);
            }
        }
    }
}
