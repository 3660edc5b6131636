//! What a tenant holds, and the API keys that reach it.

use std::collections::BTreeMap;

use epimem_core::LlmUsage;
use epimem_store::{ApiKey, Stats};
use serde::Serialize;

/// Counts of what a tenant holds, and what calls to a language model cost it per stage.
#[derive(Debug, Serialize)]
pub struct StatsOut {
    /// Conversations, messages, pending messages, episodes, queued and failed jobs.
    #[serde(flatten)]
    pub counts: Stats,
    /// By stage (`segment`, `review`, …); stages never called are left out.
    pub llm: BTreeMap<String, LlmUsage>,
}

impl StatsOut {
    pub fn new(counts: Stats, llm: &[(epimem_core::LlmStage, LlmUsage)]) -> Self {
        let llm = llm.iter().map(|(stage, usage)| (stage.as_str().to_owned(), *usage)).collect();
        Self { counts, llm }
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
