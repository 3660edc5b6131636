//! Overlap: the tail of the previous episode, carried as context into the next one.

use serde::{Deserialize, Serialize};

use super::SegmentMessage;
use crate::Timestamp;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OverlapConfig {
    /// Carry messages at most this old relative to the episode's first message...
    pub minutes: i64,
    /// ...and at most this many tokens of them...
    pub max_tokens: u32,
    /// ...and at most this many messages.
    pub max_messages: usize,
}

impl Default for OverlapConfig {
    fn default() -> Self {
        Self { minutes: 5, max_tokens: 500, max_messages: 6 }
    }
}

/// The index of the first message before `start` to carry as context into the episode that
/// begins at `start`, or `None` when nothing qualifies (say, after a long silence).
pub fn overlap_start(
    messages: &[SegmentMessage<'_>],
    start: usize,
    config: &OverlapConfig,
) -> Option<usize> {
    let first = messages.get(start)?;
    let window = config.minutes * Timestamp::MINUTE_MS;
    let mut tokens = 0u64;
    let mut chosen = None;
    for i in (0..start).rev().take(config.max_messages) {
        let m = messages[i];
        tokens += u64::from(m.tokens);
        if first.timestamp.since(m.timestamp) > window || tokens > u64::from(config.max_tokens) {
            break;
        }
        chosen = Some(i);
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Role;

    fn msg(minute: i64, tokens: u32) -> SegmentMessage<'static> {
        SegmentMessage {
            role: Role::User,
            content: "",
            timestamp: Timestamp(minute * Timestamp::MINUTE_MS),
            tokens,
            embedding: None,
        }
    }

    #[test]
    fn carries_recent_messages_within_time_and_token_limits() {
        let config = OverlapConfig::default();
        let msgs = [msg(0, 10), msg(6, 10), msg(8, 10), msg(9, 10), msg(10, 10)];
        // 6, 8 and 9 are within five minutes of 10; 0 is not.
        assert_eq!(overlap_start(&msgs, 4, &config), Some(1));
        let heavy = [msg(8, 400), msg(9, 200), msg(10, 10)];
        assert_eq!(overlap_start(&heavy, 2, &config), Some(1));
        let after_gap = [msg(0, 10), msg(60, 10)];
        assert_eq!(overlap_start(&after_gap, 1, &config), None);
        assert_eq!(overlap_start(&msgs, 0, &config), None);
        let capped = OverlapConfig { max_messages: 2, ..config };
        assert_eq!(overlap_start(&msgs, 4, &capped), Some(2));
    }
}
