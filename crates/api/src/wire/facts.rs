//! Facts: `GET /v1/facts`, and the facts a recall hands back.

use crate::engine::FactHit;
use epimem_core::facts::Fact;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// A lasting fact distilled from episodes by the language model.
#[derive(Debug, Serialize, ToSchema)]
pub struct FactOut {
    pub id: String,
    pub conversation: String,
    /// One sentence.
    pub text: String,
    /// When it became true (conversation time, RFC 3339).
    pub valid_at: String,
    /// When a later episode said otherwise; absent while it holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invalid_at: Option<String>,
    /// The episodes it came from or that confirmed it.
    pub sources: Vec<String>,
    /// How often later episodes confirmed it.
    pub reinforced: u32,
    /// How well it matched the query (recall only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

impl From<&Fact> for FactOut {
    fn from(f: &Fact) -> Self {
        Self {
            id: f.id.0.clone(),
            conversation: f.conversation.conversation.clone(),
            text: f.text.clone(),
            valid_at: f.valid_at.to_rfc3339(),
            invalid_at: f.invalid_at.map(|t| t.to_rfc3339()),
            sources: f.sources.iter().map(|s| s.0.clone()).collect(),
            reinforced: f.reinforced,
            score: None,
        }
    }
}

impl From<&FactHit> for FactOut {
    fn from(hit: &FactHit) -> Self {
        Self { score: Some(hit.score.score), ..Self::from(&hit.fact) }
    }
}

/// `GET /v1/facts`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct FactsQuery {
    /// Only this conversation's.
    pub conversation: Option<String>,
    /// Only those drawn from this person's conversations (their messages' `user`).
    pub user: Option<String>,
    /// Invalidated facts too (default: only those that hold).
    #[serde(default)]
    pub all: bool,
    /// At most this many, newest first (default 100, at most 1000).
    pub limit: Option<usize>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FactsOut {
    pub facts: Vec<FactOut>,
}
