//! Memory strength (FSRS-6): how an episode's stability starts, and how retrievable it is at a
//! given moment of conversation time.

use fsrs::{DEFAULT_PARAMETERS, FSRS, MemoryState};
use serde::{Deserialize, Serialize};

use crate::{FsrsState, Timestamp, fsrs::Rating};

const DAY_MS: f64 = 86_400_000.0;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// The retention FSRS schedules for.
    pub desired_retention: f64,
    /// Initial stability is multiplied by `1 + surprise · surprise_boost`.
    pub surprise_boost: f64,
    /// Recall scores are multiplied by `floor + (1 − floor) · R`, so an old episode fades but
    /// never disappears.
    pub retrievability_floor: f64,
    /// A memory is reviewed at most once in this much conversation time: recalled all day, it
    /// is strengthened once, not on every turn.
    pub min_review_interval_hours: f64,
}

impl MemoryConfig {
    pub fn min_review_interval_ms(&self) -> i64 {
        (self.min_review_interval_hours.max(0.0) * 3_600_000.0) as i64
    }
}

impl Default for MemoryConfig {
    fn default() -> Self {
        Self {
            desired_retention: 0.9,
            surprise_boost: 0.5,
            retrievability_floor: 0.8,
            min_review_interval_hours: 24.0,
        }
    }
}

/// FSRS with the default parameters, built once.
pub struct MemoryStrength {
    fsrs: FSRS,
    decay: f32,
    config: MemoryConfig,
}

impl std::fmt::Debug for MemoryStrength {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStrength").field("config", &self.config).finish_non_exhaustive()
    }
}

impl MemoryStrength {
    pub fn new(config: MemoryConfig) -> Self {
        // The default parameters are valid by construction.
        let fsrs = FSRS::new(&DEFAULT_PARAMETERS).expect("FSRS accepts its default parameters");
        Self { fsrs, decay: DEFAULT_PARAMETERS[20], config }
    }

    pub fn config(&self) -> &MemoryConfig {
        &self.config
    }

    /// The state of a new episode closed at `at`: the first "good" review, stability boosted
    /// by surprise, due when its retrievability falls to the desired retention.
    pub fn initial(&self, surprise: f64, at: Timestamp) -> FsrsState {
        let retention = self.config.desired_retention as f32;
        let good = self
            .fsrs
            .next_states(None, retention, 0)
            .map(|s| s.good.memory)
            .unwrap_or(MemoryState { stability: 2.3065, difficulty: 2.118 });
        let stability = f64::from(good.stability)
            * (1.0 + surprise.clamp(0.0, 1.0) * self.config.surprise_boost);
        let interval = f64::from(self.fsrs.next_interval(Some(stability as f32), retention, 1));
        FsrsState {
            stability: Some(stability),
            difficulty: Some(f64::from(good.difficulty)),
            last_review: Some(at),
            due: Some(at.plus_millis((interval * DAY_MS) as i64)),
        }
    }

    /// The state after a review rated `rating` at `at` (conversation time): FSRS's transition
    /// for the days since the last review, due when retrievability falls to the desired
    /// retention again. A state FSRS cannot step from is returned unchanged.
    pub fn review(&self, state: &FsrsState, rating: Rating, at: Timestamp) -> FsrsState {
        let retention = self.config.desired_retention as f32;
        let memory = match (state.stability, state.difficulty) {
            (Some(stability), Some(difficulty)) => Some(MemoryState {
                stability: stability.max(1e-3) as f32,
                difficulty: difficulty.clamp(1.0, 10.0) as f32,
            }),
            _ => None,
        };
        let days = state.last_review.map_or(0.0, |last| (at.since(last) as f64 / DAY_MS).max(0.0));
        let Ok(next) = self.fsrs.next_states(memory, retention, days as u32) else {
            return *state;
        };
        let chosen = match rating {
            Rating::Again => next.again,
            Rating::Hard => next.hard,
            Rating::Good => next.good,
            Rating::Easy => next.easy,
        };
        let stability = f64::from(chosen.memory.stability);
        let interval = f64::from(self.fsrs.next_interval(Some(stability as f32), retention, 1));
        FsrsState {
            stability: Some(stability),
            difficulty: Some(f64::from(chosen.memory.difficulty)),
            last_review: Some(at),
            due: Some(at.plus_millis((interval * DAY_MS) as i64)),
        }
    }

    /// The probability of recall at `now` (conversation time, fractional days since the last
    /// review); 1.0 for a state without stability or a `now` before the review.
    pub fn retrievability(&self, state: &FsrsState, now: Timestamp) -> f64 {
        let (Some(stability), Some(last)) = (state.stability, state.last_review) else {
            return 1.0;
        };
        let days = (now.since(last) as f64 / DAY_MS).max(0.0);
        let memory = MemoryState { stability: stability.max(1e-3) as f32, difficulty: 5.0 };
        f64::from(fsrs::current_retrievability(memory, days as f32, self.decay)).clamp(0.0, 1.0)
    }

    /// The probability of recall at `points` moments evenly spread from the last review (or
    /// `now`, for a state never reviewed) to `until`: the forgetting curve to draw.
    pub fn retrievability_curve(
        &self,
        state: &FsrsState,
        now: Timestamp,
        until: Timestamp,
        points: usize,
    ) -> Vec<(Timestamp, f64)> {
        let from = state.last_review.unwrap_or(now).min(until);
        let steps = points.max(2) - 1;
        let span = until.since(from).max(0) as f64;
        (0..=steps)
            .map(|i| {
                let at = from.plus_millis((span * i as f64 / steps as f64) as i64);
                (at, self.retrievability(state, at))
            })
            .collect()
    }

    /// `floor + (1 − floor) · R`: the factor a recall score is multiplied by.
    pub fn recall_weight(&self, retrievability: f64) -> f64 {
        let floor = self.config.retrievability_floor.clamp(0.0, 1.0);
        floor + (1.0 - floor) * retrievability.clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const DAY: i64 = 86_400_000;

    #[test]
    fn surprise_boosts_stability() {
        let m = MemoryStrength::new(MemoryConfig::default());
        let plain = m.initial(0.0, Timestamp(0));
        let surprising = m.initial(0.9, Timestamp(0));
        let (s0, s1) = (plain.stability.unwrap(), surprising.stability.unwrap());
        assert!((s1 / s0 - 1.45).abs() < 1e-9, "S · (1 + 0.9 · 0.5)");
        assert!(surprising.due.unwrap() > plain.due.unwrap());
        assert_eq!(plain.last_review, Some(Timestamp(0)));
    }

    #[test]
    fn retrievability_is_the_desired_retention_when_due() {
        let m = MemoryStrength::new(MemoryConfig::default());
        let s = m.initial(0.0, Timestamp(0));
        assert_eq!(m.retrievability(&s, Timestamp(0)), 1.0);
        let at_due = m.retrievability(&s, s.due.unwrap());
        assert!((at_due - 0.9).abs() < 0.02, "{at_due}");
        assert!(m.retrievability(&s, Timestamp(365 * DAY)) < 0.5);
        assert_eq!(m.retrievability(&FsrsState::default(), Timestamp(DAY)), 1.0);
    }

    #[test]
    fn each_rating_moves_stability_its_own_way() {
        let m = MemoryStrength::new(MemoryConfig::default());
        let start = m.initial(0.0, Timestamp(0));
        let at = Timestamp(3 * DAY);
        let after = |rating| m.review(&start, rating, at);
        let s = |state: &FsrsState| state.stability.unwrap();
        let (again, hard, good, easy) =
            (after(Rating::Again), after(Rating::Hard), after(Rating::Good), after(Rating::Easy));
        assert!(s(&again) < s(&start), "again: {} → {}", s(&start), s(&again));
        assert!(s(&hard) < s(&good) && s(&good) < s(&easy));
        assert!(s(&good) > s(&start), "good: {} → {}", s(&start), s(&good));
        assert!(easy.difficulty.unwrap() < start.difficulty.unwrap(), "easy makes it easier");
        assert!(again.difficulty.unwrap() > start.difficulty.unwrap());
        assert_eq!(good.last_review, Some(at));
        assert!(good.due.unwrap() > at && easy.due.unwrap() > good.due.unwrap());
    }

    proptest! {
        #[test]
        fn retrievability_decays_and_weights_stay_above_the_floor(
            surprise in 0.0f64..1.0,
            a in 0i64..1000,
            b in 0i64..1000,
        ) {
            let m = MemoryStrength::new(MemoryConfig::default());
            let s = m.initial(surprise, Timestamp(0));
            let (early, late) = (a.min(b), a.max(b));
            let (r1, r2) = (m.retrievability(&s, Timestamp(early * DAY / 10)), m.retrievability(&s, Timestamp(late * DAY / 10)));
            prop_assert!(r1 >= r2);
            prop_assert!((0.0..=1.0).contains(&r2));
            let w = m.recall_weight(r2);
            prop_assert!(w >= m.config().retrievability_floor && w <= 1.0);
        }
    }

    #[test]
    fn the_curve_falls_from_the_last_review() {
        let memory = MemoryStrength::new(MemoryConfig::default());
        let at = Timestamp(1_767_225_600_000);
        let state = memory.initial(0.5, at);
        let until = at.plus_millis(90 * DAY_MS as i64);
        let curve = memory.retrievability_curve(&state, until, until, 10);
        assert_eq!(curve.len(), 10);
        assert_eq!((curve[0].0, curve[9].0), (at, until));
        assert!((curve[0].1 - 1.0).abs() < 1e-9, "recalled at once when just reviewed");
        assert!(curve.windows(2).all(|w| w[1].1 < w[0].1 && w[1].0 > w[0].0), "{curve:?}");
        // Never reviewed: flat from now.
        let flat = memory.retrievability_curve(&FsrsState::default(), at, until, 3);
        assert!(flat.iter().all(|&(_, r)| r == 1.0) && flat[0].0 == at);
    }
}
