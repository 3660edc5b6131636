//! One search index per tenant. Nothing ranking reads (BM25 statistics, names of who spoke,
//! vocabulary, the vector scan) is shared between tenants, so one tenant's data can neither
//! show in nor move another's results.

use std::{
    collections::HashMap,
    ops::{Deref, DerefMut},
    sync::{Mutex, MutexGuard},
};

use super::SearchIndex;
use crate::EngineError;

/// The loaded indexes, by tenant.
#[derive(Debug, Default)]
pub(crate) struct TenantIndexes {
    by_tenant: Mutex<HashMap<String, SearchIndex>>,
}

/// One tenant's index, locked for the holder.
pub(crate) struct TenantIndex<'a> {
    guard: MutexGuard<'a, HashMap<String, SearchIndex>>,
    tenant: String,
}

impl TenantIndexes {
    /// The tenant's index, built by `load` if it is not loaded yet.
    pub(crate) fn get(
        &self,
        tenant: &str,
        load: impl FnOnce() -> Result<SearchIndex, EngineError>,
    ) -> Result<TenantIndex<'_>, EngineError> {
        let mut guard = self.lock()?;
        if !guard.contains_key(tenant) {
            let index = load()?;
            guard.insert(tenant.to_owned(), index);
        }
        Ok(TenantIndex { guard, tenant: tenant.to_owned() })
    }

    /// The tenant's index if it is loaded (an index not loaded yet reads the store when first
    /// used, so changes need not reach it).
    pub(crate) fn loaded(&self, tenant: &str) -> Result<Option<TenantIndex<'_>>, EngineError> {
        let guard = self.lock()?;
        Ok(guard.contains_key(tenant).then(|| TenantIndex { guard, tenant: tenant.to_owned() }))
    }

    /// Message vectors held over every loaded tenant.
    pub(crate) fn vectors_len(&self) -> usize {
        self.lock().map(|g| g.values().map(SearchIndex::vectors_len).sum()).unwrap_or(0)
    }

    fn lock(&self) -> Result<MutexGuard<'_, HashMap<String, SearchIndex>>, EngineError> {
        self.by_tenant.lock().map_err(|_| EngineError::Index("the search index is poisoned".into()))
    }
}

impl TenantIndex<'_> {
    /// Drops the index after a failed update: the store has the truth, and the next use
    /// rebuilds the index from it rather than answer from a half-updated one.
    pub(crate) fn discard(mut self) {
        self.guard.remove(&self.tenant);
    }
}

impl Deref for TenantIndex<'_> {
    type Target = SearchIndex;

    fn deref(&self) -> &SearchIndex {
        self.guard.get(&self.tenant).expect("present while the guard is held")
    }
}

impl DerefMut for TenantIndex<'_> {
    fn deref_mut(&mut self) -> &mut SearchIndex {
        self.guard.get_mut(&self.tenant).expect("present while the guard is held")
    }
}
