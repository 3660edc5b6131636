//! A damaged search index is never searched: a search that finds it damaged, or the owner's
//! periodic check of its files, has it built again from the store first.

use std::{
    sync::{PoisonError, atomic::Ordering},
    time::Instant,
};

use epimem_search::SearchError;

use crate::engine::{
    Engine, EngineError, IndexTask,
    indexing::{Building, TenantLocks},
};

impl Engine {
    /// Runs `search` on the tenant's index; when it finds the index damaged, builds the index
    /// again from the store (recalls meanwhile wait, then are refused as unavailable) and
    /// searches once more. Never an answer from a damaged index.
    pub(crate) fn searched<T>(
        &self,
        tenant: &str,
        search: impl Fn() -> Result<T, SearchError>,
    ) -> Result<T, EngineError> {
        let locks = self.index.syncing.of(tenant);
        let repairs = locks.repairs.load(Ordering::Acquire);
        match search() {
            Err(SearchError::Damaged(why)) => {
                self.repair(tenant, &locks, repairs, &why)?;
                Ok(search()?)
            }
            answer => Ok(answer?),
        }
    }

    /// Builds the tenant's damaged index again, unless another search's repair did since
    /// `repairs` was read.
    fn repair(
        &self,
        tenant: &str,
        locks: &TenantLocks,
        repairs: u64,
        why: &str,
    ) -> Result<(), EngineError> {
        // Marked first: a recall from here on waits for the rebuild rather than search the
        // index as it is thrown away.
        let _building = Building::start(&self.index.syncing, tenant);
        let _held = locks.sync.lock().unwrap_or_else(PoisonError::into_inner);
        if locks.repairs.load(Ordering::Acquire) != repairs {
            return Ok(());
        }
        self.index.search.discard(tenant)?;
        let task = IndexTask::Build { why: Some(format!("found damaged: {why}")) };
        let log = |done, total| {
            if let Some(log) = &self.index.repair_log {
                log(tenant, &task, done, total);
            }
        };
        let target = self.store.change_generation(tenant)?;
        log(0, target);
        let built = self.build(tenant, target, &mut |done, total| log(done, total));
        locks.repairs.fetch_add(1, Ordering::AcqRel);
        if let Err(e) = built {
            self.index.search.discard(tenant)?;
            return Err(e);
        }
        Ok(())
    }

    /// Whether the indexes' files are due a check ([`Engine::with_index_checks`]); if so,
    /// the next is due a period from now.
    pub(crate) fn verify_due(&self) -> bool {
        let Some(every) = self.index.verify_every else { return false };
        let mut next = self.index.next_verify.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        match *next {
            // Each index was checked as it opened: the first check is a period later.
            None => {
                *next = Some(now + every);
                false
            }
            Some(at) if now < at => false,
            Some(_) => {
                *next = Some(now + every);
                true
            }
        }
    }

    /// Checks the tenant's index against its files; when one changed behind its back, builds
    /// the index again before anything searches it.
    pub(crate) fn verify_index(&self, tenant: &str) -> Result<(), EngineError> {
        let locks = self.index.syncing.of(tenant);
        let repairs = locks.repairs.load(Ordering::Acquire);
        match self.index.search.verify(tenant) {
            Err(SearchError::Damaged(why)) => self.repair(tenant, &locks, repairs, &why),
            checked => Ok(checked?),
        }
    }
}
