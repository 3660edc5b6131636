//! What a segmentation run does with a batch: which segments close, and what stays open.

use std::ops::Range;

use crate::{
    BoundaryReason, SegmentMessage, SegmentationPolicy, TriggerKind, segment::segment_ranges,
};

/// A segment that becomes an episode.
#[derive(Debug, Clone, PartialEq)]
pub struct ClosedSegment {
    /// Indices into the pending messages.
    pub range: Range<usize>,
    /// Why it ended where it did.
    pub reason: BoundaryReason,
    /// How surprising its opening is after what came before it (the context included), from
    /// the signal that cuts: see [`SegmentationPolicy::surprises`].
    pub surprise: f64,
}

/// The outcome of one segmentation run.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Segments to close, in order; they always start at the beginning of the batch.
    pub close: Vec<ClosedSegment>,
    /// Whether the conversation's window is doubled after this run.
    pub window_doubled: bool,
}

impl Plan {
    /// Messages of the batch that close (a prefix of it).
    pub fn closed_len(&self) -> usize {
        self.close.last().map_or(0, |s| s.range.end)
    }
}

/// Segments the pending messages, `batch[context..]`, with `policy` and applies the trigger's
/// rule for the last segment (the `context` closed messages before them only inform each
/// segment's surprise):
/// - `Count`: N segments close N−1 (the last stays open as the start of the next episode);
///   a lone segment doubles the window the first time and closes once it is doubled.
/// - `Age`: as `Count`, but a lone segment closes at once.
/// - `Idle`, `Flush`: everything closes.
pub fn plan_segmentation(
    batch: &[SegmentMessage<'_>],
    context: usize,
    trigger: TriggerKind,
    window_doubled: bool,
    policy: &SegmentationPolicy,
) -> Plan {
    let context = context.min(batch.len());
    let pending = &batch[context..];
    let boundaries = policy.boundaries(pending);
    let ranges = segment_ranges(pending.len(), &boundaries);
    // Read only when something closes: a window that stays open needs no surprise.
    let closed = |n: usize, last_reason: BoundaryReason| -> Vec<ClosedSegment> {
        let surprise = policy.surprises(batch);
        (0..n)
            .map(|i| ClosedSegment {
                range: ranges[i].clone(),
                reason: boundaries.get(i).map_or(last_reason, |b| b.reason),
                surprise: surprise.at(context + ranges[i].start),
            })
            .collect()
    };
    apply_trigger(ranges.len(), trigger, window_doubled, closed)
}

/// The plan for pending messages a language model cut: each proposed segment's length (they
/// tile the pending messages) and surprise, with the trigger's rule of [`plan_segmentation`].
pub fn plan_proposed(
    segments: &[(usize, f64)],
    trigger: TriggerKind,
    window_doubled: bool,
) -> Plan {
    let mut start = 0;
    let ranges: Vec<(Range<usize>, f64)> = segments
        .iter()
        .map(|&(len, surprise)| {
            start += len;
            (start - len..start, surprise)
        })
        .collect();
    let closed = |n: usize, last_reason: BoundaryReason| -> Vec<ClosedSegment> {
        (0..n)
            .map(|i| ClosedSegment {
                range: ranges[i].0.clone(),
                reason: if i + 1 < ranges.len() {
                    BoundaryReason::ModelJudged
                } else {
                    last_reason
                },
                surprise: ranges[i].1,
            })
            .collect()
    };
    apply_trigger(ranges.len(), trigger, window_doubled, closed)
}

/// Which of `n` segments close under `trigger`; `closed(k, reason)` builds the first `k`, the
/// last of them ending for `reason` when no boundary ends it.
fn apply_trigger(
    n: usize,
    trigger: TriggerKind,
    window_doubled: bool,
    closed: impl Fn(usize, BoundaryReason) -> Vec<ClosedSegment>,
) -> Plan {
    match trigger {
        _ if n == 0 => Plan { close: Vec::new(), window_doubled },
        TriggerKind::Flush => {
            Plan { close: closed(n, BoundaryReason::Flush), window_doubled: false }
        }
        TriggerKind::Idle => Plan { close: closed(n, BoundaryReason::Idle), window_doubled: false },
        TriggerKind::Age if n == 1 => {
            Plan { close: closed(1, BoundaryReason::Age), window_doubled: false }
        }
        TriggerKind::Count if n == 1 && !window_doubled => {
            Plan { close: Vec::new(), window_doubled: true }
        }
        TriggerKind::Count if n == 1 => {
            Plan { close: closed(1, BoundaryReason::WindowFull), window_doubled: false }
        }
        TriggerKind::Count | TriggerKind::Age => {
            // The reason for the last closed one is its boundary; the argument is unused.
            Plan { close: closed(n - 1, BoundaryReason::Flush), window_doubled: false }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::{Role, Timestamp, segment::test_support::*};

    fn minutes(ms: &[i64]) -> Vec<OwnedMessage> {
        ms.iter()
            .map(|&m| OwnedMessage {
                role: Role::User,
                content: String::from("ok"),
                timestamp: Timestamp(m * Timestamp::MINUTE_MS),
                tokens: 5,
            })
            .collect()
    }

    fn plan(msgs: &[OwnedMessage], trigger: TriggerKind, doubled: bool) -> Plan {
        let views: Vec<_> = msgs.iter().map(OwnedMessage::view).collect();
        plan_segmentation(&views, 0, trigger, doubled, &SegmentationPolicy::default())
    }

    #[test]
    fn one_segment_doubles_then_closes() {
        let msgs = minutes(&(0..20).collect::<Vec<_>>());
        let first = plan(&msgs, TriggerKind::Count, false);
        assert_eq!(first, Plan { close: vec![], window_doubled: true });
        let second = plan(&msgs, TriggerKind::Count, true);
        assert_eq!(second.close.len(), 1);
        assert_eq!(second.close[0].reason, BoundaryReason::WindowFull);
        assert!(!second.window_doubled);
    }

    #[test]
    fn last_segment_stays_open_on_count() {
        // Two gaps of four hours: three segments, two close.
        let msgs = minutes(&[0, 1, 2, 242, 243, 244, 484, 485]);
        let p = plan(&msgs, TriggerKind::Count, false);
        let ranges: Vec<_> = p.close.iter().map(|s| s.range.clone()).collect();
        assert_eq!(ranges, [0..3, 3..6]);
        assert!(p.close.iter().all(|s| s.reason == BoundaryReason::TimeGap));
        assert_eq!(p.closed_len(), 6);
    }

    #[test]
    fn flush_closes_everything() {
        let msgs = minutes(&[0, 1, 2, 62, 63]);
        let p = plan(&msgs, TriggerKind::Flush, true);
        assert_eq!(p.closed_len(), 5);
        assert_eq!(p.close.last().unwrap().reason, BoundaryReason::Flush);
        assert!(!p.window_doubled);
    }

    #[test]
    fn a_segment_opening_the_batch_is_measured_against_its_context() {
        let (garden, travel) = ([1.0f32, 0.0], [0.0f32, 1.0]);
        let vectors = [&garden, &garden, &travel, &travel, &travel];
        let msgs = minutes(&[0, 1, 2, 3, 4]);
        let views: Vec<_> = msgs
            .iter()
            .zip(vectors)
            .map(|(m, v)| SegmentMessage { embedding: Some(&v[..]), ..m.view() })
            .collect();
        let policy = SegmentationPolicy::default();
        // Two closed garden messages as context, three pending travel ones flushed.
        let p = plan_segmentation(&views, 2, TriggerKind::Flush, false, &policy);
        assert_eq!(p.close.len(), 1);
        assert_eq!(p.close[0].range, 0..3, "ranges index the pending messages");
        let new_subject = p.close[0].surprise;
        assert!(
            new_subject >= policy.coherence.threshold,
            "a new subject after the context: {p:?}"
        );
        // The same travel messages after travel context are far less of a surprise.
        let p = plan_segmentation(&views[2..], 1, TriggerKind::Flush, false, &policy);
        assert!(p.close[0].range == (0..2) && p.close[0].surprise < new_subject / 2.0, "{p:?}");
        // Without the coherence model, the surprise is how unlike the windows are.
        let mut cosine = policy.clone();
        cosine.coherence.enabled = false;
        let p = plan_segmentation(&views, 2, TriggerKind::Flush, false, &cosine);
        assert!(p.close[0].surprise > 0.9, "{p:?}");
        let p = plan_segmentation(&views[2..], 1, TriggerKind::Flush, false, &cosine);
        assert!(p.close[0].surprise < 1e-9, "{p:?}");
        // Nothing before: nothing to be surprised by.
        let p = plan_segmentation(&views[2..], 0, TriggerKind::Flush, false, &policy);
        assert_eq!(p.close[0].surprise, 0.0);
    }

    #[test]
    fn a_proposed_cut_follows_the_same_trigger_rules() {
        let three = [(8, 0.2), (7, 0.9), (5, 0.2)];
        let p = plan_proposed(&three, TriggerKind::Count, false);
        let ranges: Vec<_> = p.close.iter().map(|s| s.range.clone()).collect();
        assert_eq!(ranges, [0..8, 8..15], "the last stays open");
        assert!(p.close.iter().all(|s| s.reason == BoundaryReason::ModelJudged));
        assert_eq!(p.close[1].surprise, 0.9);
        let p = plan_proposed(&three, TriggerKind::Flush, false);
        assert_eq!(p.closed_len(), 20);
        assert_eq!(p.close[2].reason, BoundaryReason::Flush);
        let one = [(20, 0.2)];
        assert_eq!(
            plan_proposed(&one, TriggerKind::Count, false),
            Plan { close: vec![], window_doubled: true }
        );
        let p = plan_proposed(&[(40, 0.6)], TriggerKind::Count, true);
        assert_eq!((p.closed_len(), p.close[0].reason), (40, BoundaryReason::WindowFull));
        assert_eq!(
            plan_proposed(&[], TriggerKind::Flush, true),
            Plan { close: vec![], window_doubled: true }
        );
    }

    proptest! {
        #[test]
        fn closed_segments_tile_a_prefix(
            msgs in conversation(100),
            trigger in prop_oneof![
                Just(TriggerKind::Count), Just(TriggerKind::Age),
                Just(TriggerKind::Idle), Just(TriggerKind::Flush),
            ],
            doubled in any::<bool>(),
        ) {
            let p = plan(&msgs, trigger, doubled);
            let mut next = 0;
            for s in &p.close {
                prop_assert_eq!(s.range.start, next);
                prop_assert!(s.range.end > s.range.start);
                next = s.range.end;
            }
            prop_assert!(next <= msgs.len());
            if matches!(trigger, TriggerKind::Flush | TriggerKind::Idle) {
                prop_assert_eq!(next, msgs.len());
            }
        }
    }
}
