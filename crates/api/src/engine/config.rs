//! The engine's configuration tree.

use epimem_core::{
    SegmentationPolicy, TriggerConfig,
    fsrs::MemoryConfig,
    recall::{RankingConfig, RelevanceConfig},
    telling::SummaryConfig,
};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineConfig {
    pub triggers: TriggerConfig,
    pub segmentation: SegmentationPolicy,
    pub summary: SummaryConfig,
    pub memory: MemoryConfig,
    pub ranking: RankingConfig,
    pub relevance: RelevanceConfig,
    pub next_turn: epimem_core::recall::NextTurnConfig,
    pub jobs: JobsConfig,
    pub consolidation: ConsolidationConfig,
    pub timeline: TimelineConfig,
    pub work: crate::engine::work::WorkContextConfig,
}

/// When periods of the timeline are rolled up: only once they are over, by a grace that lets
/// late messages arrive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TimelineConfig {
    /// A day rolls up this long after it ends.
    pub day_grace_hours: f64,
    /// A week, and a month, this long after they end.
    pub week_grace_hours: f64,
    pub month_grace_hours: f64,
    /// A year this long after it ends.
    pub year_grace_days: f64,
    /// Bullets a node keeps: the titles of its largest children.
    pub bullets: usize,
}

impl Default for TimelineConfig {
    fn default() -> Self {
        Self {
            day_grace_hours: 1.0,
            week_grace_hours: 24.0,
            month_grace_hours: 24.0,
            year_grace_days: 7.0,
            bullets: 5,
        }
    }
}

impl TimelineConfig {
    /// The grace of a level, in milliseconds.
    pub(crate) fn grace_ms(&self, level: epimem_core::TocLevel) -> i64 {
        let hours = match level {
            epimem_core::TocLevel::Day => self.day_grace_hours,
            epimem_core::TocLevel::Week => self.week_grace_hours,
            epimem_core::TocLevel::Month => self.month_grace_hours,
            epimem_core::TocLevel::Year => self.year_grace_days * 24.0,
        };
        (hours.max(0.0) * 3_600_000.0) as i64
    }
}

/// When and how episodes are distilled into facts (with a language model only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConsolidationConfig {
    /// A conversation is consolidated once this many of its episodes wait...
    pub every_episodes: u32,
    /// ...or at once when an episode at least this surprising closes (a flashbulb memory).
    pub flashbulb_surprise: f64,
    /// Episodes read in one call.
    pub episodes_per_call: usize,
    /// Known facts of the conversation shown to the model (the newest).
    pub known_facts: usize,
    /// Facts handed back with a recall, at most.
    pub recalled_facts: usize,
}

impl Default for ConsolidationConfig {
    fn default() -> Self {
        Self {
            every_episodes: 3,
            flashbulb_surprise: 0.85,
            episodes_per_call: 4,
            known_facts: 100,
            recalled_facts: 5,
        }
    }
}

/// How background jobs are leased and retried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JobsConfig {
    /// A segmentation fence older than this is stale and cleared.
    pub fence_ttl_minutes: i64,
    /// A claimed job not finished within this is claimable again.
    pub lease_seconds: i64,
    /// Claims before a failing job is kept as failed.
    pub max_attempts: u32,
    /// A failed job waits this long before its second try, twice as long before its third,
    /// and so on.
    pub retry_after_seconds: f64,
}

impl JobsConfig {
    /// How long a job that failed its `attempts`-th try waits before the next.
    pub(crate) fn backoff_ms(&self, attempts: u32) -> i64 {
        let doublings = attempts.saturating_sub(1).min(20);
        (self.retry_after_seconds * 1000.0 * f64::from(1u32 << doublings)) as i64
    }
}

impl Default for JobsConfig {
    fn default() -> Self {
        Self {
            fence_ttl_minutes: 120,
            lease_seconds: 60,
            max_attempts: 3,
            retry_after_seconds: 5.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_job_waits_twice_as_long_each_time() {
        let jobs = JobsConfig { retry_after_seconds: 5.0, ..JobsConfig::default() };
        let waits: Vec<i64> = (1..=4).map(|attempts| jobs.backoff_ms(attempts)).collect();
        assert_eq!(waits, [5_000, 10_000, 20_000, 40_000]);
        assert!(jobs.backoff_ms(u32::MAX) > 0, "no overflow however often it failed");
    }
}
