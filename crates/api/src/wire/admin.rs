//! What a tenant holds, and the API keys that reach it.

use std::collections::BTreeMap;

use epimem_core::LlmUsage;
use epimem_store::{ApiKey, Stats};
use serde::Serialize;
use utoipa::ToSchema;

/// Counts of what a tenant holds, and what calls to a language model cost it per stage.
#[derive(Debug, Serialize, ToSchema)]
pub struct StatsOut {
    pub conversations: u64,
    pub messages: u64,
    /// Messages not yet in an episode.
    pub pending_messages: u64,
    pub episodes: u64,
    /// Segmentation and other jobs waiting for a worker.
    pub queued_jobs: u64,
    /// Jobs given up on after their retries.
    pub failed_jobs: u64,
    /// By stage (`segment`, `review`, …); stages never called are left out.
    pub llm: BTreeMap<String, LlmUsageOut>,
}

/// What calls to a language model cost: every HTTP request counts, retried ones included.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
pub struct LlmUsageOut {
    pub calls: u64,
    /// Calls that got no usable reply.
    pub failures: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Time spent waiting for replies, all calls together.
    pub latency_ms: u64,
}

impl From<LlmUsage> for LlmUsageOut {
    fn from(u: LlmUsage) -> Self {
        let LlmUsage { calls, failures, prompt_tokens, completion_tokens, latency_ms } = u;
        Self { calls, failures, prompt_tokens, completion_tokens, latency_ms }
    }
}

impl std::fmt::Display for LlmUsageOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Self { calls, failures, prompt_tokens, completion_tokens, latency_ms } = *self;
        LlmUsage { calls, failures, prompt_tokens, completion_tokens, latency_ms }.fmt(f)
    }
}

impl StatsOut {
    pub fn new(counts: Stats, llm: &[(epimem_core::LlmStage, LlmUsage)]) -> Self {
        let llm = llm.iter().map(|(stage, u)| (stage.as_str().to_owned(), (*u).into())).collect();
        let Stats { conversations, messages, pending_messages, episodes, queued_jobs, failed_jobs } =
            counts;
        Self { conversations, messages, pending_messages, episodes, queued_jobs, failed_jobs, llm }
    }
}

/// An API key as stored: never the key itself, except once, when it is made.
#[derive(Debug, Serialize)]
pub struct KeyOut {
    pub id: u64,
    pub tenant: String,
    /// What the key is for ("ci", "laptop").
    pub name: String,
    pub created: String,
    pub revoked: Option<String>,
    /// The key, in the answer that made it only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

impl From<&ApiKey> for KeyOut {
    fn from(k: &ApiKey) -> Self {
        Self {
            id: k.id,
            tenant: k.tenant.clone(),
            name: k.name.clone(),
            created: k.created.to_rfc3339(),
            revoked: k.revoked.map(|t| t.to_rfc3339()),
            key: None,
        }
    }
}

/// Every tenant's keys, oldest first.
#[derive(Debug, Serialize)]
pub struct KeysOut {
    pub keys: Vec<KeyOut>,
}
