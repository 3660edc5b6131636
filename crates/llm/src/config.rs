//! The `[llm]` settings.

use std::time::Duration;

use epimem_core::LlmStage;
use serde::{Deserialize, Serialize};

/// Where the chat model is and how to call it. With no `url`, epimem runs LLM-free.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    /// Base URL of an OpenAI-compatible API, ending in `/v1`; empty for none.
    pub url: String,
    /// The model for every stage that names none of its own.
    pub model: String,
    /// Sent as a bearer token; empty for servers that want none.
    pub api_key: String,
    /// A model per stage, where it should differ from `model`.
    pub models: StageModels,
    /// A call not answered within this fails (and is retried).
    pub timeout_seconds: f64,
    /// Retries of a call that timed out, lost its connection, was rate limited (429) or met a
    /// server error (5xx).
    pub max_retries: u32,
    /// The first retry waits about this long, each next one about twice as long.
    pub retry_base_ms: u64,
    /// No wait between retries is longer, whatever a server's `Retry-After` asks.
    pub max_retry_wait_seconds: f64,
    /// Calls in flight at once, from all threads of the process.
    pub concurrency: usize,
}

/// A model per stage; empty means `llm.model`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StageModels {
    pub segmentation: String,
    pub summary: String,
    pub review: String,
    pub consolidation: String,
}

impl LlmConfig {
    /// Whether a model is configured at all.
    pub fn is_enabled(&self) -> bool {
        !self.url.trim().is_empty()
    }

    pub fn model_for(&self, stage: LlmStage) -> &str {
        let own = match stage {
            LlmStage::Segmentation => &self.models.segmentation,
            LlmStage::Summary => &self.models.summary,
            LlmStage::Review => &self.models.review,
            LlmStage::Consolidation => &self.models.consolidation,
        };
        if own.trim().is_empty() { &self.model } else { own }
    }

    pub(crate) fn timeout(&self) -> Duration {
        Duration::try_from_secs_f64(self.timeout_seconds).unwrap_or(Duration::from_secs(120))
    }

    pub(crate) fn max_retry_wait(&self) -> Duration {
        Duration::try_from_secs_f64(self.max_retry_wait_seconds).unwrap_or(Duration::from_secs(60))
    }
}

impl Default for LlmConfig {
    fn default() -> Self {
        Self {
            url: String::new(),
            model: String::new(),
            api_key: String::new(),
            models: StageModels::default(),
            timeout_seconds: 120.0,
            max_retries: 3,
            retry_base_ms: 1000,
            max_retry_wait_seconds: 60.0,
            concurrency: 2,
        }
    }
}

// By hand: the key must never reach a log.
impl std::fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmConfig")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &if self.api_key.is_empty() { "" } else { "<set>" })
            .field("models", &self.models)
            .field("timeout_seconds", &self.timeout_seconds)
            .field("max_retries", &self.max_retries)
            .field("retry_base_ms", &self.retry_base_ms)
            .field("max_retry_wait_seconds", &self.max_retry_wait_seconds)
            .field("concurrency", &self.concurrency)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stage_without_its_own_model_uses_the_default_one() {
        let config = LlmConfig {
            model: "qwen".into(),
            models: StageModels { review: "gpt-4o-mini".into(), ..StageModels::default() },
            ..LlmConfig::default()
        };
        assert_eq!(config.model_for(LlmStage::Segmentation), "qwen");
        assert_eq!(config.model_for(LlmStage::Review), "gpt-4o-mini");
    }

    #[test]
    fn the_key_is_not_printed() {
        let config = LlmConfig { api_key: "sk-secret".into(), ..LlmConfig::default() };
        assert!(!format!("{config:?}").contains("sk-secret"));
    }
}
