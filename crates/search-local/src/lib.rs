//! epimem's embedded search index: BM25 over episodes and over single messages (tantivy) and
//! 8-bit message vectors (scanned exactly, or by groups of near vectors past
//! [`APPROXIMATE_FROM`]), one index per tenant, saved in a folder beside the database (or kept
//! in memory only).
//!
//! Derived state: built from the store's change log, saved with the number of the last change
//! it applied, and caught up from there when next opened (the engine drives that through
//! [`Search::generation`] and [`Search::apply`]). A saved index that is missing, unreadable,
//! out of step or built with another embedder is started again empty and rebuilt. A process
//! beside the one that holds a tenant's saved index reads it as last saved and keeps its own
//! changes in memory.

mod candidates;
mod clusters;
mod common_words;
mod held_folder;
mod index;
mod lexical;
mod ragged;
mod state;
mod table;
mod tokenizer;
mod top_k;
mod vector_file;
mod vectors;
mod words;

use std::{
    collections::HashMap,
    fs,
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use epimem_core::recall::{EpisodeCandidates, RankingConfig, TurnTable};
use epimem_search::{EpisodeQuery, Search, SearchError, TurnQuery, Update, WordVectors};

use index::{StateSave, TenantIndex, io_error};
pub use vectors::APPROXIMATE_FROM;
use vectors::{Regroup, VectorConfig};

/// Episodes an update stages while holding the index: a search waits for at most this many.
const STAGED_AT_ONCE: usize = 16;

/// The embedded search index: one [`TenantIndex`] per tenant, so nothing ranking reads (BM25
/// statistics, names of who spoke, vocabulary, the vector scan) crosses tenants.
#[derive(Debug)]
pub struct LocalSearch {
    config: VectorConfig,
    /// Where the tenants' indexes are saved; in memory only when `None`.
    folder: Option<PathBuf>,
    /// The embedder their vectors must come from (`none` without one).
    fingerprint: String,
    /// Locked only to find or open a tenant's index: tenants never wait for each other.
    by_tenant: Mutex<HashMap<String, Arc<Tenant>>>,
}

/// A tenant's index and what orders the work on it.
#[derive(Debug)]
struct Tenant {
    /// Held through a whole update (its save included), so updates apply one at a time and in
    /// order, and nothing changes the index while its state is encoded.
    applying: Mutex<()>,
    /// How many threads wait for `applying`: a save made in a pause stops for them.
    waiting: AtomicUsize,
    /// Read by searches (side by side) and by a save while it encodes the state; written by
    /// an update only while it stages (not while BM25 commits).
    index: RwLock<TenantIndex>,
}

impl Tenant {
    fn new(index: TenantIndex) -> Self {
        Self { applying: Mutex::new(()), waiting: AtomicUsize::new(0), index: RwLock::new(index) }
    }

    fn index(&self) -> Result<RwLockWriteGuard<'_, TenantIndex>, SearchError> {
        self.index.write().map_err(|_| poisoned())
    }

    fn read(&self) -> Result<RwLockReadGuard<'_, TenantIndex>, SearchError> {
        self.index.read().map_err(|_| poisoned())
    }

    /// Takes `applying`, counted among those waiting for it meanwhile.
    fn applying(&self) -> Result<MutexGuard<'_, ()>, SearchError> {
        self.waiting.fetch_add(1, Ordering::AcqRel);
        let held = self.applying.lock();
        self.waiting.fetch_sub(1, Ordering::AcqRel);
        held.map_err(|_| poisoned())
    }

    /// Encodes a state taken from the index into its file while searches go on (the caller
    /// holds `applying`, so no update changes it meanwhile), then writes the vectors and puts
    /// the state in place without the index's lock; if that fails, the next save writes
    /// everything again. With `give_way`, the save stops while it encodes as soon as anyone
    /// waits for `applying` (an update, or a catch-up asking the generation): encoding takes
    /// a second or two at a million episodes, which a writer's flush would otherwise wait for.
    fn write(&self, save: Option<StateSave>, give_way: bool) -> Result<(), SearchError> {
        let Some(mut save) = save else { return Ok(()) };
        let waited_for = || give_way && self.waiting.load(Ordering::Acquire) > 0;
        let encoded = save.encode(&*self.read()?, &waited_for);
        // Stopped, or encoded with someone waiting by then: writing the vectors would not stop.
        if encoded.as_ref().is_ok_and(|&whole| !whole || waited_for()) {
            self.index()?.gave_way(save);
            return Ok(());
        }
        let written = encoded.and_then(|_| save.write());
        self.index()?.saved(written)
    }
}

fn poisoned() -> SearchError {
    SearchError::Index("the search index is poisoned (a thread panicked using it)".into())
}

impl LocalSearch {
    /// An index in this process's memory only. `config` says how much a message's vector
    /// score borrows from its neighbours' (`vector_neighbor_weights`,
    /// `neighbor_max_gap_minutes`).
    pub fn in_memory(config: &RankingConfig) -> Self {
        Self {
            config: vector_config(config),
            folder: None,
            fingerprint: "none".into(),
            by_tenant: Mutex::default(),
        }
    }

    /// An index saved in `folder` (made on first use), for vectors of the embedder with this
    /// `fingerprint` (`None`: no embedder). A tenant's saved index built with another embedder,
    /// or by another version of this format, is started again and rebuilt. When another process
    /// holds a tenant's saved index, this one reads what the holder last saved and keeps its
    /// own changes in memory (a copy built in memory when the saved one cannot be read); it never
    /// writes to the folder.
    pub fn open(folder: &Path, config: &RankingConfig, fingerprint: Option<&str>) -> Self {
        Self {
            config: vector_config(config),
            folder: Some(folder.to_path_buf()),
            fingerprint: fingerprint.unwrap_or("none").to_owned(),
            by_tenant: Mutex::default(),
        }
    }

    /// Message vectors are grouped by nearest centroid once a tenant has `rows` of them, and a
    /// search then scans the groups nearest the query only (`usize::MAX`: always every row).
    /// Approximate: it may miss a few of the rows an exact scan ranks best.
    #[must_use]
    pub fn approximate_from(mut self, rows: usize) -> Self {
        self.config.approximate_from = rows;
        self
    }

    /// The folder a tenant's saved index lives in (a hash of its name: any name is safe).
    fn tenant_folder(&self, tenant: &str) -> Option<PathBuf> {
        let folder = self.folder.as_ref()?;
        Some(folder.join(format!("{:016x}", xxhash_rust::xxh3::xxh3_64(tenant.as_bytes()))))
    }

    fn lock(&self) -> Result<MutexGuard<'_, HashMap<String, Arc<Tenant>>>, SearchError> {
        self.by_tenant.lock().map_err(|_| poisoned())
    }

    /// Runs `f` on the tenant's index (opened on first use), beside other readers.
    fn with<T>(
        &self,
        tenant: &str,
        f: impl FnOnce(&TenantIndex) -> Result<T, SearchError>,
    ) -> Result<T, SearchError> {
        let tenant = self.tenant(tenant)?;
        let index = tenant.read()?;
        f(&index)
    }

    /// A search of the tenant's index. A read that fails, or panics (tantivy panics on some
    /// damaged postings, in a retriever's thread), is told as damage: the index is derived,
    /// and the engine rebuilds it from the store rather than answer from it.
    fn search<T>(
        &self,
        tenant: &str,
        f: impl FnOnce(&TenantIndex) -> Result<T, SearchError>,
    ) -> Result<T, SearchError> {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.with(tenant, f))) {
            Ok(Err(SearchError::Index(why))) => Err(SearchError::Damaged(why)),
            Ok(answer) => answer,
            Err(panic) => {
                let why = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("a read panicked");
                Err(SearchError::Damaged(format!("a read failed: {why}")))
            }
        }
    }

    /// The tenant's index, opened if it is not yet.
    fn tenant(&self, tenant: &str) -> Result<Arc<Tenant>, SearchError> {
        let mut loaded = self.lock()?;
        if let Some(found) = loaded.get(tenant) {
            return Ok(found.clone());
        }
        let folder = self.tenant_folder(tenant);
        let index = TenantIndex::open(folder.as_deref(), tenant, &self.fingerprint, self.config)?;
        let opened = Arc::new(Tenant::new(index));
        loaded.insert(tenant.to_owned(), opened.clone());
        Ok(opened)
    }

    /// Whether the tenant's index is saved on disk (false when it lives in memory only: an
    /// in-memory index, or a saved one another process holds).
    pub fn on_disk(&self, tenant: &str) -> Result<bool, SearchError> {
        self.with(tenant, |index| Ok(index.on_disk()))
    }
}

impl Search for LocalSearch {
    fn started_again(&self, tenant: &str) -> Result<Option<String>, SearchError> {
        self.with(tenant, |index| Ok(index.restarted.clone()))
    }

    fn generation(&self, tenant: &str) -> Result<u64, SearchError> {
        // After the update under way, if any: its generation is recorded before its BM25
        // commit, and a caller must not take that for searchable yet.
        let tenant = self.tenant(tenant)?;
        let _applying = tenant.applying()?;
        Ok(tenant.read()?.generation)
    }

    fn apply(&self, tenant: &str, update: &Update<'_>) -> Result<(), SearchError> {
        let tenant = self.tenant(tenant)?;
        let _applying = tenant.applying()?;
        if !update.forgotten.is_empty() {
            tenant.index()?.forget(update.forgotten)?;
        }
        if !update.restated.is_empty() {
            tenant.index()?.restate(update.restated);
        }
        if update.added.is_empty() && update.generation.is_none() {
            return Ok(()); // a forget alone, committed above
        }
        // Staged a few episodes at a time, letting searches in between.
        for added in update.added.chunks(STAGED_AT_ONCE) {
            tenant.index()?.add(added);
        }
        // Grouping the vectors again, once they have doubled, takes seconds over a million
        // episodes (k-means, every row to its nearest centroid), and storing them group after
        // group anew, once an eighth more joined, about 2 s over two million rows: on rows
        // shared with the index, without its lock, so searches go on meanwhile, but no other
        // update runs. An update does it only when a pause has not for twice that long.
        let grouping = tenant.index()?.grouping(Regroup::Overdue);
        if let Some(grouping) = grouping {
            let done = grouping.run();
            tenant.index()?.grouped(done);
        }
        let pending = tenant.index()?.pending(update.generation);
        pending.commit(false)?; // searches go on meanwhile
        let save = tenant.index()?.committed()?;
        tenant.write(save, false)
    }

    fn held_elsewhere(&self, tenant: &str) -> Result<bool, SearchError> {
        Ok(self.folder.is_some() && !self.on_disk(tenant)?)
    }

    fn adopt(&self, tenant: &str) -> Result<bool, SearchError> {
        let Some(folder) = self.tenant_folder(tenant) else { return Ok(false) };
        // Only an index open here, read beside its holder, is adopted: none is opened for this.
        let Some(current) = self.lock()?.get(tenant).cloned() else { return Ok(false) };
        let parts = ["episodes", "messages"].map(|part| folder.join(part));
        if current.read()?.on_disk() || !parts.iter().all(|part| held_folder::free(part)) {
            return Ok(false);
        }
        let index = TenantIndex::open(Some(&folder), tenant, &self.fingerprint, self.config)?;
        if !index.on_disk() {
            return Ok(false); // taken by another process meanwhile: this one's stays as it was
        }
        // Searches under way finish with the one read beside the holder, which goes with them.
        let adopted = Arc::new(Tenant::new(index));
        self.lock()?.insert(tenant.to_owned(), adopted);
        Ok(true)
    }

    fn settle(&self, tenant: &str) -> Result<(), SearchError> {
        // Only an index open here can hold anything unsaved: none is opened for this.
        let Some(tenant) = self.lock()?.get(tenant).cloned() else { return Ok(()) };
        // The vectors are grouped or stored anew, when that is due, without holding updates
        // up: one that comes meanwhile changes the rows, and the result is dropped for a
        // later pause, one twice as long as this took, to do again.
        let grouping = {
            let _applying = tenant.applying()?;
            tenant.index()?.grouping_in_pause(Instant::now())
        };
        let regrouped = grouping.map(|grouping| {
            let started = Instant::now();
            (grouping.run(), started.elapsed())
        });
        let _applying = tenant.applying()?;
        if let Some((done, took)) = regrouped {
            tenant.index()?.regrouped_in_pause(done, took);
        }
        let save = tenant.index()?.settled(Instant::now())?;
        tenant.write(save, true)
    }

    fn verify(&self, tenant: &str) -> Result<(), SearchError> {
        // Only an index open here is checked: none is opened for this.
        let Some(tenant) = self.lock()?.get(tenant).cloned() else { return Ok(()) };
        // No update or save meanwhile: the files are what the state says they are.
        let _applying = tenant.applying()?;
        let index = tenant.read()?;
        index.verify()
    }

    fn discard(&self, tenant: &str) -> Result<(), SearchError> {
        // Opened if it was not, so that a saved index this process can hold is emptied too.
        self.tenant(tenant)?;
        let mut shared = self.lock()?.remove(tenant).expect("opened above");
        // Searches that found it before it left the table finish first: its writer lock and
        // files must be released before the folder goes (else the next open finds it held).
        let mut index = loop {
            match Arc::try_unwrap(shared) {
                Ok(alone) => break alone.index.into_inner().map_err(|_| poisoned())?,
                Err(again) => shared = again,
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        index.abandon();
        let on_disk = index.on_disk();
        drop(index);
        // Only the process that holds the saved index may empty its folder.
        if on_disk
            && let Some(folder) = self.tenant_folder(tenant)
            && folder.exists()
        {
            fs::remove_dir_all(&folder).map_err(|e| io_error(&folder, e))?;
        }
        Ok(())
    }

    fn episodes(&self, query: &EpisodeQuery<'_>) -> Result<EpisodeCandidates, SearchError> {
        self.search(&query.scope.tenant, |index| index.episode_candidates(query))
    }

    fn turns(
        &self,
        query: &TurnQuery<'_>,
        words: Option<&dyn WordVectors>,
    ) -> Result<TurnTable, SearchError> {
        self.search(&query.scope.tenant, |index| index.turn_candidates(query, words))
    }

    fn embedding_text(&self, tenant: &str, text: &str) -> Result<String, SearchError> {
        self.with(tenant, |index| Ok(index.without_names(text)))
    }

    fn read_names(
        &self,
        tenant: &str,
        text: &str,
        tail: &[epimem_search::TailLine<'_>],
    ) -> Result<Vec<epimem_core::recall::NameReading>, SearchError> {
        self.with(tenant, |index| index.read_names(text, tail))
    }

    fn vectors(&self) -> usize {
        let tenants: Vec<Arc<Tenant>> =
            self.lock().map(|g| g.values().cloned().collect()).unwrap_or_default();
        tenants.iter().filter_map(|t| t.read().ok()).map(|i| i.vectors_len()).sum()
    }
}

/// How message vectors are searched, from the ranking settings that concern them.
fn vector_config(config: &RankingConfig) -> VectorConfig {
    VectorConfig { borrow: epimem_core::recall::Borrow::of(config), ..VectorConfig::default() }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use epimem_core::{ConversationKey, Role, Scope};
    use epimem_search::{IndexedEpisode, IndexedLine, conformance};

    use super::*;

    /// A saved index holding one episode of tenant "t": "I planted tomatoes".
    fn with_tomatoes(folder: &Path) -> LocalSearch {
        let search = LocalSearch::open(folder, &RankingConfig::default(), None);
        add_episode(&search, 1, "I planted tomatoes", None);
        search
    }

    /// Adds to tenant "t", as change `generation`, an episode of one line, `content`, with
    /// `vector`.
    fn add_episode(search: &LocalSearch, generation: u64, content: &str, vector: Option<&[f32]>) {
        let at = 1_767_225_600_000 + generation as i64 * 3_600_000;
        let conversation = ConversationKey::new("t", format!("c{generation}"));
        let episode = conformance::episode(conversation, (1, 1), (at, at + 60_000), content);
        let line = IndexedLine { seq: 1, role: Role::User, author: "Ana", content, vector };
        let added = [IndexedEpisode { episode: &episode, lines: vec![line] }];
        let update = Update { added: &added, generation: Some(generation), ..Update::default() };
        search.apply("t", &update).unwrap();
    }

    /// A save made in a pause stops for an update waiting meanwhile: the state saved before
    /// stays, and the index is as if the save had not been taken, so the next pause saves all
    /// of it (its vectors too: had the save left them marked as written, the next would skip
    /// them and the state would name rows its file does not hold).
    #[test]
    fn a_save_in_a_pause_gives_way_to_an_update_and_the_next_pause_saves_it_all() {
        let dir = tempfile::TempDir::new().unwrap();
        let search = LocalSearch::open(dir.path(), &RankingConfig::default(), None);
        add_episode(&search, 1, "I planted tomatoes", Some(&[1.0, 0.0])); // saved: a build's
        add_episode(&search, 2, "the walrus sleeps on the ice", Some(&[0.0, 1.0])); // left
        let folder = search.tenant_folder("t").unwrap();
        let saved = || state::head(&folder).unwrap().unwrap().generation;
        assert_eq!(saved(), 1);
        let tenant = search.tenant("t").unwrap();
        let pause = Instant::now() + Duration::from_secs(5);

        let save = tenant.index().unwrap().settled(pause).unwrap();
        assert!(save.is_some(), "a commit unsaved, and quiet since");
        tenant.waiting.store(1, Ordering::Release); // an update waits
        tenant.write(save, true).unwrap();
        tenant.waiting.store(0, Ordering::Release);
        assert_eq!(saved(), 1, "the state saved before stays");
        assert!(!folder.join(format!("{}.tmp", state::STATE)).exists(), "no temporary file left");

        let save = tenant.index().unwrap().settled(pause).unwrap();
        tenant.write(save, true).unwrap();
        assert_eq!(saved(), 2, "saved at the next pause");
        drop((tenant, search));
        let reopened = LocalSearch::open(dir.path(), &RankingConfig::default(), None);
        assert_eq!(reopened.started_again("t").unwrap(), None, "read as saved");
        assert_eq!((reopened.generation("t").unwrap(), reopened.vectors()), (2, 2));
    }

    /// A save encodes the state holding the index as searches do, side by side with them:
    /// searches are not held up for as long as that takes (half a second or more at a million
    /// episodes).
    #[test]
    fn a_search_is_answered_while_a_save_reads_the_index() {
        let dir = tempfile::TempDir::new().unwrap();
        let search = with_tomatoes(dir.path());
        let tenant = search.tenant("t").unwrap();
        let encoding = tenant.read().unwrap(); // what a save holds while it encodes
        let (answer, answered) = mpsc::channel();
        std::thread::scope(|s| {
            s.spawn(|| {
                let scope = Scope::tenant("t");
                let query =
                    EpisodeQuery { scope: &scope, text: "tomatoes", vector: None, candidates: 5 };
                let episodes = search.episodes(&query).map(|c| c.candidates.len());
                // Turns with soft word matching, which keeps the vectors of the words it met.
                let query = TurnQuery {
                    scope: &scope,
                    text: "tomato seedlings",
                    vector: None,
                    candidates: 5,
                    episode_context: true,
                    word_match: true,
                    reach: 1,
                    max_gap_ms: 0,
                    weighed: "tomato seedlings",
                    tail: &[],
                };
                let turns = search.turns(&query, Some(&OneAxis)).map(|t| t.turns.len());
                answer.send((episodes, turns)).unwrap();
            });
            let found = answered.recv_timeout(Duration::from_secs(10));
            drop(encoding);
            let (episodes, turns) = found.expect("answered while the save read");
            assert_eq!((episodes.unwrap(), turns.unwrap()), (1, 1));
        });
    }

    /// Every word on one axis: any two words alike.
    struct OneAxis;

    impl WordVectors for OneAxis {
        fn embed_words(&self, words: &[&str]) -> Result<Vec<Vec<f32>>, SearchError> {
            Ok(words.iter().map(|_| vec![1.0, 0.0]).collect())
        }
    }
}
