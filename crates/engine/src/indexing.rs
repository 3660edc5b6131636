//! Keeping each tenant's search index current: loaded from the store on first use, extended
//! by the episodes this process closes, and caught up from the store's change log with what
//! other processes closed or forgot, before every use.

use std::collections::HashSet;

use epimem_core::{Episode, EpisodeId};
use epimem_store::{SegmentationBatch, Store};

use crate::{
    Engine, EngineError,
    search::{IndexedLine, SearchIndex, TenantIndex},
};

/// Changes read from the store at a time while catching up.
const CHANGES_PER_READ: usize = 10_000;

impl<S: Store> Engine<S> {
    /// The tenant's search index, loaded on first use and caught up with the store.
    pub(crate) fn search_index(&self, tenant: &str) -> Result<TenantIndex<'_>, EngineError> {
        let mut index = self.indexes.get(tenant, || {
            // The generation is read before the rows: a change in between is applied again by
            // the catch-up below, which is harmless (adding what is there, or forgetting what
            // is not, changes nothing).
            let generation = self.store.change_generation(tenant)?;
            let rows = self.store.indexed_messages(tenant, self.fingerprint())?;
            let mut index = SearchIndex::build(&rows, &self.config.ranking)?;
            index.generation = generation;
            Ok(index)
        })?;
        if self.store.change_generation(tenant)? > index.generation
            && let Err(e) = self.catch_up(&mut index, tenant)
        {
            index.discard();
            return Err(e);
        }
        Ok(index)
    }

    /// Applies the tenant's changes since the index's generation, in order: episodes forgotten
    /// leave it, episodes closed (by any process) and not yet in it are read and added.
    fn catch_up(&self, index: &mut SearchIndex, tenant: &str) -> Result<(), EngineError> {
        loop {
            let changes = self.store.episode_changes(tenant, index.generation, CHANGES_PER_READ)?;
            let Some(last) = changes.last().map(|c| c.seq) else { return Ok(()) };
            let mut forgotten: HashSet<EpisodeId> = HashSet::new();
            let mut added: Vec<EpisodeId> = Vec::new();
            for change in changes {
                if change.forgotten {
                    added.retain(|id| *id != change.episode);
                    forgotten.insert(change.episode);
                } else if !added.contains(&change.episode) {
                    added.push(change.episode);
                }
            }
            index.remove(&forgotten.into_iter().collect::<Vec<_>>())?;
            added.retain(|id| !index.contains(id));
            let rows = self.store.indexed_messages_of(tenant, &added, self.fingerprint())?;
            index.add_rows(&rows)?;
            index.generation = last;
        }
    }

    fn fingerprint(&self) -> Option<&str> {
        self.embedder.as_ref().map(|e| e.fingerprint())
    }

    /// Number of message vectors in the loaded indexes (0 before the first recall).
    pub fn indexed_vectors(&self) -> usize {
        self.indexes.vectors_len()
    }

    /// Loads the tenant's search index now (else its first recall does), so a caller can time
    /// it.
    pub fn load_search_index(&self, tenant: &str) -> Result<(), EngineError> {
        self.search_index(tenant).map(drop)
    }

    /// Adds newly closed episodes to the loaded search index (if one is loaded: an unloaded
    /// index reads them from the store when first used). The episodes are committed already,
    /// so an index that cannot take them is dropped, to be rebuilt from the store.
    pub(crate) fn index_closed(
        &self,
        episodes: &[Episode],
        batch: &SegmentationBatch,
        vectors: Option<&[Vec<f32>]>,
    ) {
        let Some(first) = episodes.first() else { return };
        let Ok(Some(mut index)) = self.indexes.loaded(&first.conversation.tenant) else { return };
        let offset = batch.context.len();
        let closed: Vec<(&Episode, Vec<IndexedLine<'_>>)> = episodes
            .iter()
            .map(|e| {
                let lines = batch
                    .pending
                    .iter()
                    .enumerate()
                    .filter(|(_, m)| (e.first_seq..=e.last_seq).contains(&m.seq))
                    .map(|(i, m)| IndexedLine {
                        seq: m.seq,
                        role: m.role,
                        author: m.author(),
                        content: &m.content,
                        vector: vectors.map(|v| v[offset + i].as_slice()),
                    })
                    .collect();
                (e, lines)
            })
            .collect();
        if index.add(&closed).is_err() {
            index.discard();
        }
    }
}
