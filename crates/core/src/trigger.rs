//! When to segment: the count, age, idle and flush triggers over a conversation's queue.

use serde::{Deserialize, Serialize};

use crate::Timestamp;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TriggerConfig {
    /// Pending messages that trigger segmentation...
    pub window: u64,
    /// ...or this many once a window found no boundary and was doubled.
    pub window_max: u64,
    /// Segment when the oldest pending message is older than this.
    pub max_age_minutes: i64,
    /// Close everything pending after this much conversation silence (checked by a tick).
    pub idle_minutes: i64,
    /// Never segment fewer pending messages than this, unless flushed or silent for
    /// `idle_minutes`: a short exchange that ends is still remembered.
    pub floor: u64,
}

impl Default for TriggerConfig {
    fn default() -> Self {
        Self { window: 20, window_max: 40, max_age_minutes: 120, idle_minutes: 5, floor: 5 }
    }
}

/// What set segmentation off. It decides what happens to the last segment of the batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TriggerKind {
    /// The window filled: close all but the last segment, which stays open.
    Count,
    /// The oldest message waited too long: as `Count`, but a lone segment is closed.
    Age,
    /// The conversation fell silent: close everything.
    Idle,
    /// Someone asked: close everything.
    Flush,
}

/// What the store knows of a conversation's queue at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueSnapshot {
    /// Highest sequence number in the conversation (0 when empty).
    pub last_seq: u64,
    /// Highest sequence number already in an episode.
    pub watermark: u64,
    pub oldest_pending: Option<Timestamp>,
    pub newest: Option<Timestamp>,
    pub window_doubled: bool,
}

impl QueueSnapshot {
    pub fn pending(&self) -> u64 {
        self.last_seq - self.watermark
    }
}

/// A decision to segment pending messages up to and including `upto_seq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trigger {
    pub kind: TriggerKind,
    pub upto_seq: u64,
}

/// Decides whether `queue` should be segmented at `now`. `upto_seq` is pinned to the snapshot's
/// last message, so messages arriving later never join a batch already decided.
pub fn evaluate_trigger(
    queue: &QueueSnapshot,
    now: Timestamp,
    config: &TriggerConfig,
    flush: bool,
) -> Option<Trigger> {
    let pending = queue.pending();
    let fire = |kind| Some(Trigger { kind, upto_seq: queue.last_seq });
    if pending == 0 {
        return None;
    }
    if flush {
        return fire(TriggerKind::Flush);
    }
    if queue.newest.is_some_and(|t| now.since(t) >= config.idle_minutes * Timestamp::MINUTE_MS) {
        return fire(TriggerKind::Idle);
    }
    if pending < config.floor {
        return None;
    }
    if queue
        .oldest_pending
        .is_some_and(|t| now.since(t) > config.max_age_minutes * Timestamp::MINUTE_MS)
    {
        return fire(TriggerKind::Age);
    }
    let window = if queue.window_doubled { config.window_max } else { config.window };
    if pending >= window {
        return fire(TriggerKind::Count);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: i64 = Timestamp::MINUTE_MS;

    fn queue(pending: u64, oldest_min: i64, newest_min: i64, doubled: bool) -> QueueSnapshot {
        QueueSnapshot {
            last_seq: 100 + pending,
            watermark: 100,
            oldest_pending: Some(Timestamp(oldest_min * MIN)),
            newest: Some(Timestamp(newest_min * MIN)),
            window_doubled: doubled,
        }
    }

    fn kind(q: QueueSnapshot, now_min: i64, flush: bool) -> Option<TriggerKind> {
        evaluate_trigger(&q, Timestamp(now_min * MIN), &TriggerConfig::default(), flush)
            .map(|t| t.kind)
    }

    #[test]
    fn count_window_doubles() {
        assert_eq!(kind(queue(19, 0, 1, false), 1, false), None);
        assert_eq!(kind(queue(20, 0, 1, false), 1, false), Some(TriggerKind::Count));
        assert_eq!(kind(queue(39, 0, 1, true), 1, false), None);
        assert_eq!(kind(queue(40, 0, 1, true), 1, false), Some(TriggerKind::Count));
    }

    #[test]
    fn floor_holds_unless_flushed_or_silent() {
        // Four messages, the oldest three hours old, the newest a minute ago: too few to cut.
        assert_eq!(kind(queue(4, 0, 179, false), 180, false), None);
        // The same after five minutes of silence: a short exchange that ended closes.
        assert_eq!(kind(queue(4, 0, 179, false), 184, false), Some(TriggerKind::Idle));
        assert_eq!(kind(queue(4, 0, 0, false), 0, true), Some(TriggerKind::Flush));
        assert_eq!(kind(queue(0, 0, 0, false), 0, true), None);
    }

    #[test]
    fn idle_and_age() {
        // Five minutes of silence flushes.
        assert_eq!(kind(queue(6, 0, 10, false), 15, false), Some(TriggerKind::Idle));
        assert_eq!(kind(queue(6, 0, 10, false), 14, false), None);
        // The oldest message waited over two hours while the conversation kept going.
        assert_eq!(kind(queue(6, 0, 121, false), 121, false), Some(TriggerKind::Age));
        assert_eq!(kind(queue(6, 0, 120, false), 120, false), None);
    }

    #[test]
    fn upto_is_pinned_to_the_snapshot() {
        let q = queue(25, 0, 1, false);
        let t = evaluate_trigger(&q, Timestamp(MIN), &TriggerConfig::default(), false).unwrap();
        assert_eq!(t.upto_seq, 125);
    }
}
