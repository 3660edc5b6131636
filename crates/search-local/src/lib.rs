//! epimem's embedded search index: BM25 over episodes and over single messages (tantivy) and
//! 8-bit message vectors scanned exactly, one index per tenant, in this process's memory.
//!
//! Derived state: built from the store's change log on a tenant's first use and kept current
//! from it (the engine drives that through [`Search::generation`] and [`Search::apply`]).

mod candidates;
mod index;
mod lexical;
mod table;
mod tokenizer;
mod top_k;
mod vectors;
mod words;

use std::{
    collections::HashMap,
    sync::{Mutex, MutexGuard},
};

use epimem_core::{EpisodeCandidates, RankingConfig, TurnTable};
use epimem_search::{EpisodeQuery, Search, SearchError, TurnQuery, Update, WordVectors};

use index::TenantIndex;

/// The embedded search index: one [`TenantIndex`] per tenant, so nothing ranking reads (BM25
/// statistics, names of who spoke, vocabulary, the vector scan) crosses tenants.
#[derive(Debug)]
pub struct LocalSearch {
    config: RankingConfig,
    by_tenant: Mutex<HashMap<String, TenantIndex>>,
}

impl LocalSearch {
    /// An empty index. `config` says how much a message's vector score borrows from its
    /// neighbours' (`vector_neighbor_weights`, `neighbor_max_gap_minutes`).
    pub fn new(config: &RankingConfig) -> Self {
        Self { config: config.clone(), by_tenant: Mutex::default() }
    }

    fn lock(&self) -> Result<MutexGuard<'_, HashMap<String, TenantIndex>>, SearchError> {
        self.by_tenant.lock().map_err(|_| SearchError::Index("the search index is poisoned".into()))
    }

    /// Runs `f` on the tenant's index, made empty on first use.
    fn with<T>(
        &self,
        tenant: &str,
        f: impl FnOnce(&mut TenantIndex) -> Result<T, SearchError>,
    ) -> Result<T, SearchError> {
        let mut guard = self.lock()?;
        if !guard.contains_key(tenant) {
            guard.insert(tenant.to_owned(), TenantIndex::new(&self.config)?);
        }
        f(guard.get_mut(tenant).expect("inserted above"))
    }
}

impl Search for LocalSearch {
    fn generation(&self, tenant: &str) -> Result<u64, SearchError> {
        Ok(self.lock()?.get(tenant).map_or(0, |i| i.generation))
    }

    fn apply(&self, tenant: &str, update: &Update<'_>) -> Result<(), SearchError> {
        self.with(tenant, |index| {
            index.remove(update.forgotten)?;
            index.add(update.added)?;
            if let Some(generation) = update.generation {
                index.generation = index.generation.max(generation);
            }
            Ok(())
        })
    }

    fn discard(&self, tenant: &str) -> Result<(), SearchError> {
        self.lock()?.remove(tenant);
        Ok(())
    }

    fn episodes(&self, query: &EpisodeQuery<'_>) -> Result<EpisodeCandidates, SearchError> {
        self.with(&query.scope.tenant, |index| index.episode_candidates(query))
    }

    fn turns(
        &self,
        query: &TurnQuery<'_>,
        words: Option<&dyn WordVectors>,
    ) -> Result<TurnTable, SearchError> {
        self.with(&query.scope.tenant, |index| index.turn_candidates(query, words))
    }

    fn embedding_text(&self, tenant: &str, text: &str) -> Result<String, SearchError> {
        self.with(tenant, |index| Ok(index.without_names(text)))
    }

    fn vectors(&self) -> usize {
        self.lock().map(|g| g.values().map(TenantIndex::vectors_len).sum()).unwrap_or(0)
    }
}
