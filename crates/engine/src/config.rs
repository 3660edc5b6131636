//! The engine's configuration tree.

use epimem_core::{MemoryConfig, RankingConfig, SegmentationPolicy, SummaryConfig, TriggerConfig};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineConfig {
    pub triggers: TriggerConfig,
    pub segmentation: SegmentationPolicy,
    pub summary: SummaryConfig,
    pub memory: MemoryConfig,
    pub ranking: RankingConfig,
    pub jobs: JobsConfig,
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
}

impl Default for JobsConfig {
    fn default() -> Self {
        Self { fence_ttl_minutes: 120, lease_seconds: 60, max_attempts: 3 }
    }
}
