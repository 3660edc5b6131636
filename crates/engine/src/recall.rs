//! Recall: finding the episodes that answer a query.

use epimem_core::{Episode, Scope};
use epimem_store::Store;

use crate::{Engine, EngineError};

/// One recalled episode and why it came back.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallHit {
    pub episode: Episode,
    /// Higher is better.
    pub score: f64,
    /// 1-based rank among the lexical (BM25) candidates.
    pub lexical_rank: usize,
}

impl<S: Store> Engine<S> {
    /// The episodes in `scope` that best match `query`, best first, at most `limit`.
    pub fn recall(
        &self,
        scope: &Scope,
        query: &str,
        limit: usize,
    ) -> Result<Vec<RecallHit>, EngineError> {
        if query.trim().is_empty() {
            return Err(EngineError::Invalid("the recall query is empty".into()));
        }
        if limit == 0 {
            return Err(EngineError::Invalid("the recall limit must be at least 1".into()));
        }
        let hits = self.store.search_lexical(scope, query, limit)?;
        Ok(hits
            .into_iter()
            .enumerate()
            .map(|(i, h)| RecallHit { episode: h.episode, score: h.score, lexical_rank: i + 1 })
            .collect())
    }
}
