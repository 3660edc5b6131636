//! Keeping each tenant's search index current: the index is caught up from the store's change
//! log with what any process closed or forgot since the last change it applied, before every
//! recall ([`Freshness::BeforeRecall`]) or by its owner after writes and on a timer
//! ([`Freshness::Background`]). A new index (at change 0) is built from the episodes live at the
//! log's last change, found by reading the log's ids alone; a built one is caught up change by
//! change.

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex, PoisonError, TryLockError, atomic::AtomicU64},
    time::{Duration, Instant},
};

use epimem_core::{EpisodeId, Scope};
use epimem_search::{IndexedEpisode, IndexedLine, Search, Update};
use epimem_store::IndexedMessage;

use crate::engine::{Engine, EngineError};

/// Changes read from the store at a time while catching up.
const CHANGES_PER_READ: usize = 10_000;
/// How long a recall waits for a build of its tenant's index under way before it is refused,
/// unless the engine is told otherwise ([`Engine::with_build_wait`]).
pub(crate) const BUILD_WAIT: Duration = Duration::from_secs(2);
/// How often a waiting recall looks whether the build is done.
const BUILD_POLL: Duration = Duration::from_millis(5);
/// How often a process beside the holder of a saved index looks whether the holder saved it.
const HOLDER_SAVE_POLL: Duration = Duration::from_millis(250);

/// When a process beside the holder of a saved index that cannot be read yet (the holder is
/// building it, and saves its state once the build is done) waits for the holder's save,
/// rather than build a copy of its own at once. A copy takes about 0.07-0.16 ms a change on a
/// 2-core machine (7 s and 1.4 GB at 100,000 changes, 160 s and 3.7 GB at a million), reading
/// the saved index a second and a third of that memory: from about 100,000 changes a wait
/// costs about what a copy takes in time and far less memory, and past the wait the copy is
/// built anyway.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HolderSave {
    pub(crate) from_changes: u64,
    pub(crate) wait: Duration,
}

impl Default for HolderSave {
    fn default() -> Self {
        Self { from_changes: 100_000, wait: Duration::from_secs(25) }
    }
}

/// What bringing a tenant's search index up to the store's last change takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexTask {
    /// Building it from the store: a new index, or a saved one that could not be used (`why`:
    /// built with another embedder, damaged, out of step).
    Build { why: Option<String> },
    /// Waiting for another process that holds the saved index (a server or a worker on the
    /// same database) to save one that can be read (it is building it), so as to read it
    /// instead of building a copy (only for a large one: [`Engine::with_holder_save_wait`]).
    AwaitSave,
    /// Building a copy of its own in memory from the store: another process (a server or a
    /// worker on the same database) holds the saved index, and what it saved cannot be read
    /// (it is building it, or with another embedder). One that can is read instead, and only
    /// caught up.
    Copy,
    /// Applying what was closed or forgotten since it last ran.
    CatchUp,
}

/// A tenant's locks. `sync` is held while its index is built or caught up. `apply` is held
/// while a batch of episodes is read from the store and applied to the index, and while this
/// process forgets episodes from both: a forget in between would take its episodes out of the
/// index before the batch read before it put them back.
#[derive(Debug, Default)]
pub(crate) struct TenantLocks {
    pub(crate) sync: Mutex<()>,
    apply: Mutex<()>,
    /// Counts the rebuilds of a damaged index: a search that met damage before the last one
    /// ended needs none of its own.
    pub(crate) repairs: AtomicU64,
}

/// Receives what a rebuild of a damaged index does: the tenant, the task (with why), then
/// `(done, total)` changes.
pub type RepairLog = Box<dyn Fn(&str, &IndexTask, u64, u64) + Send + Sync>;

/// The locks of each tenant, and the tenants whose index is being built from nothing.
#[derive(Debug, Default)]
pub(crate) struct SyncLocks {
    locks: Mutex<HashMap<String, Arc<TenantLocks>>>,
    building: Mutex<HashSet<String>>,
}

impl SyncLocks {
    pub(crate) fn of(&self, tenant: &str) -> Arc<TenantLocks> {
        // A map of locks: one a panicking thread left is still whole.
        let mut locks = self.locks.lock().unwrap_or_else(PoisonError::into_inner);
        locks.entry(tenant.to_owned()).or_default().clone()
    }

    fn building(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        // Names only: a set a panicking thread left is still right.
        self.building.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Marks a tenant's index as being built while it lives (a mark already there is left to
/// the guard that made it: the first catch-up of a server holds one over its build's).
pub(crate) struct Building<'a> {
    locks: &'a SyncLocks,
    tenant: &'a str,
    marked: bool,
}

impl<'a> Building<'a> {
    pub(crate) fn start(locks: &'a SyncLocks, tenant: &'a str) -> Self {
        let marked = locks.building().insert(tenant.to_owned());
        Self { locks, tenant, marked }
    }
}

impl Drop for Building<'_> {
    fn drop(&mut self) {
        if self.marked {
            self.locks.building().remove(self.tenant);
        }
    }
}

/// The search index recall asks and its upkeep: when it is caught up, how long a recall waits
/// for a build, the tenants kept current and the locks of each, the checks of its files.
pub(crate) struct Indexes {
    pub(crate) search: Box<dyn Search>,
    pub(crate) freshness: Freshness,
    /// How long a recall waits for its tenant's index to be built before it is refused.
    pub(crate) build_wait: Duration,
    /// Beside the process holding a saved index: how large a copy must be before waiting for
    /// the holder's save is worth it, and for how long.
    pub(crate) holder_save: HolderSave,
    /// The tenants whose index is kept current in the background mode (recalled from once).
    pub(crate) kept_current: Mutex<HashSet<String>>,
    /// Each tenant's locks: one held while its index is built or caught up, one while a batch
    /// is read from the store and applied to it, or a forget takes episodes out of both.
    pub(crate) syncing: SyncLocks,
    /// Told when a tenant's index is rebuilt while serving (a search found it damaged).
    pub(crate) repair_log: Option<RepairLog>,
    /// How often the owner's refresh checks the indexes' files (none: never after open).
    pub(crate) verify_every: Option<Duration>,
    pub(crate) next_verify: Mutex<Option<Instant>>,
}

impl Indexes {
    pub(crate) fn new(search: Box<dyn Search>) -> Self {
        Self {
            search,
            freshness: Freshness::default(),
            build_wait: BUILD_WAIT,
            holder_save: HolderSave::default(),
            kept_current: Default::default(),
            syncing: Default::default(),
            repair_log: None,
            verify_every: None,
            next_verify: Default::default(),
        }
    }
}

/// When recall brings a tenant's search index up to the store's last change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Freshness {
    /// Before every recall: always current, at the price of catching up on the request (a
    /// command that recalls once, a test).
    #[default]
    BeforeRecall,
    /// On a tenant's first recall only; after that the engine catches the index up after its
    /// own writes and the owner calls [`Engine::refresh_indexes`] on a timer for what other
    /// processes wrote. A recall then never waits for an update it did not cause (a server).
    Background,
}

impl Engine {
    /// Catches the tenant's index up before a recall, as the engine's [`Freshness`] says.
    pub(crate) fn index_for_recall(&self, tenant: &str) -> Result<(), EngineError> {
        self.load_search_index(tenant, &mut |_, _, _| {})
    }

    /// After this process wrote to the tenant: in the background mode, its index (if one is
    /// kept) is caught up now, so the writer's next recall finds what it wrote.
    pub(crate) fn index_after_write(&self, tenant: &str) -> Result<(), EngineError> {
        if self.index.freshness == Freshness::Background && self.kept_current(tenant) {
            self.sync_index(tenant, &mut |_, _, _| {})?;
        }
        Ok(())
    }

    /// Catches up every index recalled from so far with what any process wrote since (in the
    /// background mode; for the owner's timer), and lets each save what updates left unsaved
    /// once they pause. Returns the first failure, after trying all.
    /// A tenant whose index another thread is building or catching up is left to it: waiting
    /// would hold the worker (and its jobs) for as long as a build takes.
    pub(crate) fn refresh_indexes(&self) -> Result<(), EngineError> {
        let tenants: Vec<String> = self.lock_kept().iter().cloned().collect();
        let mut first_error = None;
        if self.verify_due() {
            for tenant in &tenants {
                if let Err(e) = self.verify_index(tenant) {
                    first_error.get_or_insert(e);
                }
            }
        }
        for tenant in tenants {
            let lock = self.index.syncing.of(&tenant);
            let held = match lock.sync.try_lock() {
                Ok(held) => held,
                Err(TryLockError::Poisoned(e)) => e.into_inner(),
                Err(TryLockError::WouldBlock) => continue,
            };
            let refreshed = self.refresh_locked(&tenant);
            // Saved without the sync lock, so that a writer's flush catching the index up
            // meanwhile is not held up: the index stops the save for it, and saves at the
            // next pause.
            drop(held);
            if let Err(e) = refreshed.and_then(|()| Ok(self.index.search.settle(&tenant)?)) {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// A refresh of one tenant's index, its sync lock held: caught up; taken over if it was
    /// read beside a process that held the saved one and has stopped (and caught up again from
    /// what that one saved).
    fn refresh_locked(&self, tenant: &str) -> Result<(), EngineError> {
        self.sync_locked(tenant, &mut |_, _, _| {})?;
        if self.index.search.adopt(tenant)? {
            self.sync_locked(tenant, &mut |_, _, _| {})?;
        }
        Ok(())
    }

    /// Searching an index still being built would answer from a part of the memory as if it
    /// were all of it: a recall waits for a build under way (most take moments), and past
    /// the engine's build wait ([`BUILD_WAIT`] by default) is refused as unavailable, saying why.
    fn wait_for_build(&self, tenant: &str) -> Result<(), EngineError> {
        // Real time, not the engine's clock: this is a wait, not a moment in the data.
        let until = Instant::now() + self.index.build_wait;
        while self.index.syncing.building().contains(tenant) {
            if Instant::now() >= until {
                return Err(EngineError::IndexBuilding(tenant.to_owned()));
            }
            std::thread::sleep(BUILD_POLL);
        }
        Ok(())
    }

    fn kept_current(&self, tenant: &str) -> bool {
        self.lock_kept().contains(tenant)
    }

    fn lock_kept(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        // The set holds names only: one a panicking thread left behind is still right.
        self.index.kept_current.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Brings the tenant's search index up to the store's last change (as it was when asked:
    /// changes made meanwhile wait for the next call, so writers cannot keep a recall
    /// catching up), telling `progress` what it does as it goes. An update that fails discards
    /// the index, to be built again from the store on the next use. One thread at a time per
    /// tenant: a second would redo the first's work between its updates.
    fn sync_index(
        &self,
        tenant: &str,
        progress: &mut dyn FnMut(&IndexTask, u64, u64),
    ) -> Result<(), EngineError> {
        let lock = self.index.syncing.of(tenant);
        let _held = lock.sync.lock().unwrap_or_else(PoisonError::into_inner);
        self.sync_locked(tenant, progress)
    }

    /// [`Engine::sync_index`] with the tenant's sync lock held.
    fn sync_locked(
        &self,
        tenant: &str,
        progress: &mut dyn FnMut(&IndexTask, u64, u64),
    ) -> Result<(), EngineError> {
        let target = self.store.change_generation(tenant)?;
        let mut from = self.index.search.generation(tenant)?;
        if from == 0 && target >= self.index.holder_save.from_changes {
            from = self.await_holders_save(tenant, target, progress)?;
        }
        if from >= target {
            return Ok(());
        }
        let caught_up = match from {
            0 => {
                let _building = Building::start(&self.index.syncing, tenant);
                let task = match self.index.search.held_elsewhere(tenant)? {
                    true => IndexTask::Copy,
                    false => IndexTask::Build { why: self.index.search.started_again(tenant)? },
                };
                progress(&task, 0, target);
                self.build(tenant, target, &mut |done, total| progress(&task, done, total))
            }
            _ => {
                let task = IndexTask::CatchUp;
                progress(&task, 0, target - from);
                self.catch_up(tenant, from, target, &mut |done, total| {
                    progress(&task, done.saturating_sub(from), total - from)
                })
            }
        };
        if let Err(e) = caught_up {
            self.index.search.discard(tenant)?;
            return Err(e);
        }
        Ok(())
    }

    /// The generation of the saved index that another process holds, once it saved one this
    /// process can read (0: it did not within the wait, or the index is this process's own).
    fn await_holders_save(
        &self,
        tenant: &str,
        target: u64,
        progress: &mut dyn FnMut(&IndexTask, u64, u64),
    ) -> Result<u64, EngineError> {
        // Not when the holder's saved index could not be used whatever it saves (another
        // embedder's).
        if !self.index.search.held_elsewhere(tenant)?
            || self.index.search.started_again(tenant)?.is_some()
        {
            return Ok(0);
        }
        progress(&IndexTask::AwaitSave, 0, target);
        // Real time, not the engine's clock: this is a wait, not a moment in the data.
        let until = Instant::now() + self.index.holder_save.wait;
        while Instant::now() < until {
            std::thread::sleep(HOLDER_SAVE_POLL);
            // Opened again: the copy in memory is dropped (the holder's folder is never touched).
            self.index.search.discard(tenant)?;
            let from = self.index.search.generation(tenant)?;
            if from > 0 || !self.index.search.held_elsewhere(tenant)? {
                return Ok(from);
            }
        }
        Ok(0)
    }

    /// Builds the tenant's search index again from the store (after a model change, or to
    /// repair it), calling `progress(changes applied, changes in all)` as it goes.
    pub(crate) fn reindex(
        &self,
        tenant: &str,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<(), EngineError> {
        let lock = self.index.syncing.of(tenant);
        let _held = lock.sync.lock().unwrap_or_else(PoisonError::into_inner);
        self.index.search.discard(tenant)?;
        let target = self.store.change_generation(tenant)?;
        if let Err(e) = self.build(tenant, target, progress) {
            self.index.search.discard(tenant)?;
            return Err(e);
        }
        Ok(())
    }

    /// Builds a new index from the change log read for ids alone: only the episodes live at
    /// its last change are read from the store and added, in the order they were closed, so a
    /// tenant that forgot, corrected and reviewed much costs what it holds now, not its
    /// history. Every episode the log forgot is forgotten first, in case a build cut short left
    /// one behind. `target` only scales `progress`.
    pub(crate) fn build(
        &self,
        tenant: &str,
        target: u64,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<(), EngineError> {
        // Live episodes in the order they were (last) closed: a forgotten one leaves a hole.
        let mut order: Vec<Option<EpisodeId>> = Vec::new();
        let mut at: HashMap<EpisodeId, usize> = HashMap::new();
        let mut dead: HashSet<EpisodeId> = HashSet::new();
        let mut from = 0;
        while from < target {
            let changes = self.store.episode_changes(tenant, from, CHANGES_PER_READ)?;
            let Some(last) = changes.last().map(|c| c.seq) else { break };
            for change in changes.into_iter().filter(|c| !c.restated) {
                if change.forgotten {
                    if let Some(i) = at.remove(&change.episode) {
                        order[i] = None;
                    }
                    dead.insert(change.episode);
                } else if !at.contains_key(&change.episode) {
                    dead.remove(&change.episode);
                    at.insert(change.episode.clone(), order.len());
                    order.push(Some(change.episode));
                }
            }
            from = last;
        }
        let live: Vec<EpisodeId> = order.into_iter().flatten().collect();
        let dead: Vec<EpisodeId> = dead.into_iter().collect();
        let mut forgotten = dead.as_slice();
        for (i, ids) in live.chunks(CHANGES_PER_READ).enumerate() {
            self.apply_read(tenant, ids, Update { forgotten, ..Update::default() })?;
            forgotten = &[];
            let done = (i * CHANGES_PER_READ + ids.len()) as u64;
            progress(target * done / live.len() as u64, target);
        }
        // The generation last, once every live episode is in.
        let update = Update { forgotten, added: &[], restated: &[], generation: Some(from) };
        self.index.search.apply(tenant, &update)?;
        progress(target, target);
        Ok(())
    }

    /// Applies the tenant's changes after `from` (the index's generation), in order: episodes
    /// forgotten leave it, episodes closed and not forgotten since are read from the store and
    /// added. `target` (the store's last change when asked) only scales `progress`.
    fn catch_up(
        &self,
        tenant: &str,
        mut from: u64,
        target: u64,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<(), EngineError> {
        while from < target {
            let changes = self.store.episode_changes(tenant, from, CHANGES_PER_READ)?;
            let Some(last) = changes.last().map(|c| c.seq) else { return Ok(()) };
            let mut forgotten: HashSet<EpisodeId> = HashSet::new();
            let mut added: Vec<EpisodeId> = Vec::new();
            let mut restated: HashSet<EpisodeId> = HashSet::new();
            for change in changes {
                if change.forgotten {
                    added.retain(|id| *id != change.episode);
                    restated.remove(&change.episode);
                    forgotten.insert(change.episode);
                } else if change.restated {
                    restated.insert(change.episode);
                } else if !added.contains(&change.episode) {
                    added.push(change.episode);
                }
            }
            let forgotten: Vec<EpisodeId> = forgotten.into_iter().collect();
            // An episode added here is read as it is now, its strength included.
            let restated: Vec<EpisodeId> =
                restated.into_iter().filter(|id| !added.contains(id)).collect();
            let restated = match restated.is_empty() {
                true => Vec::new(),
                false => self.store.episodes_by_id(&Scope::tenant(tenant), &restated)?,
            };
            let update = Update {
                forgotten: &forgotten,
                restated: &restated,
                generation: Some(last),
                ..Update::default()
            };
            self.apply_read(tenant, &added, update)?;
            from = last;
            progress(from.min(target), target);
        }
        Ok(())
    }

    /// Applies `update` with the episodes `ids` read from the store as they are now, holding
    /// the tenant's apply lock (see [`TenantLocks`]), then takes out again those a change
    /// committed since they were read forgot.
    fn apply_read(
        &self,
        tenant: &str,
        ids: &[EpisodeId],
        update: Update<'_>,
    ) -> Result<(), EngineError> {
        let locks = self.index.syncing.of(tenant);
        let _applying = locks.apply.lock().unwrap_or_else(PoisonError::into_inner);
        let seen = self.store.change_generation(tenant)?;
        let rows = self.store.indexed_messages_of(tenant, ids, self.fingerprint())?;
        let added = episodes_of(&rows);
        self.index.search.apply(tenant, &Update { added: &added, ..update })?;
        self.take_out_forgotten_since(tenant, seen, ids)
    }

    /// Takes out of the index those of `ids`, just read from the store and applied, that a
    /// change after `seen` (the store's last change before they were read) forgot: another
    /// process forgot them meanwhile, and this one hears of that only from the log. Left in,
    /// their words would stay in the index's files until its next catch-up, and for good in
    /// an index processes share once one of them has caught up past that forget.
    fn take_out_forgotten_since(
        &self,
        tenant: &str,
        mut seen: u64,
        ids: &[EpisodeId],
    ) -> Result<(), EngineError> {
        let read: HashSet<&EpisodeId> = ids.iter().collect();
        let mut gone: Vec<EpisodeId> = Vec::new();
        loop {
            let changes = self.store.episode_changes(tenant, seen, CHANGES_PER_READ)?;
            let Some(last) = changes.last().map(|c| c.seq) else { break };
            let forgotten =
                changes.into_iter().filter(|c| c.forgotten && read.contains(&c.episode));
            gone.extend(forgotten.map(|c| c.episode));
            seen = last;
        }
        if !gone.is_empty() {
            self.index.search.apply(tenant, &Update { forgotten: &gone, ..Update::default() })?;
        }
        Ok(())
    }

    /// Runs `forget`, which forgets some of the tenant's episodes in the store and then in the
    /// index, while no batch of the tenant's episodes is between being read from the store and
    /// applied to the index (see [`TenantLocks`]).
    pub(crate) fn forgetting<T>(
        &self,
        tenant: &str,
        forget: impl FnOnce() -> Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        let locks = self.index.syncing.of(tenant);
        let _applying = locks.apply.lock().unwrap_or_else(PoisonError::into_inner);
        forget()
    }

    fn fingerprint(&self) -> Option<&str> {
        self.embedder.as_ref().map(|e| e.fingerprint())
    }

    /// Number of message vectors in the search index (0 before the first recall, for an index
    /// that loads on first use).
    pub(crate) fn indexed_vectors(&self) -> usize {
        self.index.search.vectors()
    }

    /// Brings the tenant's search index up to date now (else its first recall does), so a
    /// caller can time it or show it, telling `progress` what it does as it goes: the task
    /// (with why a saved index was started again), then `(done, total)` changes, the first
    /// time with `done` 0. Nothing is told when the index is current already.
    pub(crate) fn load_search_index(
        &self,
        tenant: &str,
        progress: &mut dyn FnMut(&IndexTask, u64, u64),
    ) -> Result<(), EngineError> {
        match self.index.freshness {
            Freshness::BeforeRecall => self.sync_index(tenant, progress),
            Freshness::Background if self.kept_current(tenant) => self.wait_for_build(tenant),
            Freshness::Background => {
                // Marked as building until the first catch-up is done, from before the tenant
                // is kept: a recall meanwhile waits for it rather than read an index not yet
                // opened, caught up or built (and answer nothing).
                let _first = Building::start(&self.index.syncing, tenant);
                // Kept before the catch-up: a write finishing meanwhile catches up after it.
                self.lock_kept().insert(tenant.to_owned());
                let synced = self.sync_index(tenant, progress);
                if synced.is_err() {
                    self.lock_kept().remove(tenant);
                }
                synced
            }
        }
    }
}

/// The store's rows (episode by episode, in sequence order) as the search port takes them.
fn episodes_of(rows: &[IndexedMessage]) -> Vec<IndexedEpisode<'_>> {
    rows.chunk_by(|a, b| a.episode.id == b.episode.id)
        .map(|group| IndexedEpisode {
            episode: &group[0].episode,
            lines: group
                .iter()
                .map(|r| IndexedLine {
                    seq: r.seq,
                    role: r.role,
                    author: &r.author,
                    content: &r.content,
                    vector: r.vector.as_deref(),
                })
                .collect(),
        })
        .collect()
}
