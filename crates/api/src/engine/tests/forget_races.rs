//! A forget that lands while a catch-up is between reading episodes from the store and applying
//! them to the index: the forgotten words must not come back into the index's files.

use std::{
    path::Path,
    sync::{Arc, Mutex, OnceLock, Weak, mpsc},
    thread::JoinHandle,
    time::Duration,
};

use super::common::{T0, engine_at, remember};
use crate::engine::{Engine, EngineConfig, FixedClock, RecallQuery};
use epimem_core::{
    EpisodeId, Scope, Timestamp,
    recall::{EpisodeCandidates, TurnTable},
};
use epimem_embed::{Embedder, HashEmbedder};
use epimem_search::{EpisodeQuery, Search, SearchError, TurnQuery, Update, WordVectors};
use epimem_search_local::LocalSearch;
use epimem_store_sqlite::SqliteStore;

/// Runs once, the first time an update adds an episode that holds "walrus", with that
/// episode's id and the update's own application, which it must run and return.
type Hook = Box<
    dyn FnOnce(EpisodeId, &dyn Fn() -> Result<(), SearchError>) -> Result<(), SearchError> + Send,
>;

/// A saved search index that runs a [`Hook`] around the update adding the walrus episode: at
/// the moment a catch-up has read it from the store and not yet applied it.
struct Hooked {
    inner: LocalSearch,
    hook: Mutex<Option<Hook>>,
}

impl std::fmt::Debug for Hooked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooked").field("inner", &self.inner).finish_non_exhaustive()
    }
}

impl Search for Hooked {
    fn generation(&self, tenant: &str) -> Result<u64, SearchError> {
        self.inner.generation(tenant)
    }
    fn apply(&self, tenant: &str, update: &Update<'_>) -> Result<(), SearchError> {
        let walrus =
            update.added.iter().find(|e| e.lines.iter().any(|l| l.content.contains("walrus")));
        let hook = walrus.and_then(|_| self.hook.lock().unwrap().take());
        match (walrus, hook) {
            (Some(e), Some(hook)) => {
                hook(e.episode.id.clone(), &|| self.inner.apply(tenant, update))
            }
            _ => self.inner.apply(tenant, update),
        }
    }
    fn discard(&self, tenant: &str) -> Result<(), SearchError> {
        self.inner.discard(tenant)
    }
    fn episodes(&self, query: &EpisodeQuery<'_>) -> Result<EpisodeCandidates, SearchError> {
        self.inner.episodes(query)
    }
    fn turns(
        &self,
        query: &TurnQuery<'_>,
        words: Option<&dyn WordVectors>,
    ) -> Result<TurnTable, SearchError> {
        self.inner.turns(query, words)
    }
    fn embedding_text(&self, tenant: &str, text: &str) -> Result<String, SearchError> {
        self.inner.embedding_text(tenant, text)
    }
    fn read_names(
        &self,
        tenant: &str,
        text: &str,
        tail: &[epimem_search::TailLine<'_>],
    ) -> Result<Vec<epimem_core::recall::NameReading>, SearchError> {
        self.inner.read_names(tenant, text, tail)
    }
    fn vectors(&self) -> usize {
        self.inner.vectors()
    }
}

/// An engine on the database at `db` whose index is saved in `folder` and runs `hook`.
fn hooked(db: &Path, folder: &Path, hook: Hook) -> Engine {
    let config = EngineConfig::default();
    let embedder = HashEmbedder::new(256);
    let inner = LocalSearch::open(folder, &config.ranking, Some(embedder.fingerprint()));
    let search = Box::new(Hooked { inner, hook: Mutex::new(Some(hook)) });
    let clock = Box::new(Arc::new(FixedClock::new(Timestamp(T0))));
    Engine::new(
        std::sync::Arc::new(SqliteStore::open(db).unwrap()),
        search,
        config,
        clock,
        "t:1".into(),
    )
    .with_embedder(Box::new(embedder))
}

fn query(text: &str) -> RecallQuery {
    RecallQuery::new(Scope::tenant("t"), text, 10)
}

/// A file under `dir` that holds `word`, if any.
fn in_some_file(dir: &Path, word: &str) -> Option<std::path::PathBuf> {
    std::fs::read_dir(dir).unwrap().find_map(|entry| {
        let path = entry.unwrap().path();
        if path.is_dir() {
            return in_some_file(&path, word);
        }
        let bytes = std::fs::read(&path).unwrap_or_default();
        bytes.windows(word.len()).any(|w| w == word.as_bytes()).then_some(path)
    })
}

#[test]
fn an_episode_another_process_forgets_while_it_is_read_is_taken_out_again() {
    let dir = tempfile::tempdir().unwrap();
    let (db, folder) = (dir.path().join("e.db"), dir.path().join("e.search"));
    let writer = Arc::new(engine_at(&db));
    let other = writer.clone();
    let ran = Arc::new(Mutex::new(false));
    let hook_ran = ran.clone();
    let hook: Hook = Box::new(move |id, apply| {
        // Another process forgets it: this one's index hears of it only from the change log.
        other.delete_episode(&Scope::tenant("t"), &id).unwrap();
        *hook_ran.lock().unwrap() = true;
        apply()
    });
    let reader = hooked(&db, &folder, hook);
    remember(&reader, "t", "c", 0, &["the garden tomatoes are ripe", "time to make sauce"]);
    assert!(!reader.recall(&query("tomatoes")).unwrap().is_empty(), "loads the index");
    let vectors = reader.indexed_vectors();

    remember(&writer, "t", "c", 1, &["a walrus played the saxophone", "at the harbour concert"]);
    let hits = reader.recall(&query("walrus saxophone")).unwrap();
    assert!(*ran.lock().unwrap(), "the catch-up read the walrus episode before it was forgotten");
    assert!(hits.iter().all(|h| h.episode.first_seq < 2), "{hits:?}");
    assert_eq!(reader.indexed_vectors(), vectors, "its vectors went again");
    drop(reader); // saves what the index holds
    for word in ["walrus", "saxophon", "harbour"] {
        assert_eq!(in_some_file(&folder, word), None, "{word}");
    }
}

#[test]
fn a_forget_in_this_process_waits_for_a_batch_read_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let (db, folder) = (dir.path().join("e.db"), dir.path().join("e.search"));
    let engine_cell: Arc<OnceLock<Weak<Engine>>> = Arc::default();
    let forgetter_cell: Arc<Mutex<Option<JoinHandle<usize>>>> = Arc::default();
    let (cell, forgetter_slot) = (engine_cell.clone(), forgetter_cell.clone());
    let hook: Hook = Box::new(move |id, apply| {
        let engine = cell.get().unwrap().upgrade().unwrap();
        let (applied, was_applied) = mpsc::channel();
        let (looked, has_looked) = mpsc::channel();
        // A forget of the episode in this process, and a look at what the index holds once it
        // returned and the batch read before it was applied.
        let forgetter = std::thread::spawn(move || {
            engine.delete_episode(&Scope::tenant("t"), &id).unwrap();
            was_applied.recv().unwrap();
            let vectors = engine.indexed_vectors();
            let _ = looked.send(()); // no one waits once the batch is done
            vectors
        });
        // Time for the forget to finish if nothing holds it back.
        std::thread::sleep(Duration::from_millis(300));
        let outcome = apply();
        applied.send(()).unwrap();
        // The look happens now if the forget returned already; else after this batch.
        let _ = has_looked.recv_timeout(Duration::from_millis(500));
        *forgetter_slot.lock().unwrap() = Some(forgetter);
        outcome
    });
    let engine = Arc::new(hooked(&db, &folder, hook));
    engine_cell.set(Arc::downgrade(&engine)).unwrap();
    remember(&engine, "t", "c", 0, &["the garden tomatoes are ripe", "time to make sauce"]);
    assert!(!engine.recall(&query("tomatoes")).unwrap().is_empty(), "loads the index");

    let writer = engine_at(&db);
    remember(&writer, "t", "c", 1, &["a walrus played the saxophone", "at the harbour concert"]);
    engine.recall(&query("walrus saxophone")).unwrap();
    let forgetter = forgetter_cell.lock().unwrap().take().expect("the catch-up read the walrus");
    let vectors = forgetter.join().unwrap();
    assert_eq!(vectors, 2, "once the forget returned, the index held the first episode only");
    let hits = engine.recall(&query("walrus saxophone")).unwrap();
    assert!(hits.iter().all(|h| h.episode.first_seq < 2), "{hits:?}");
    drop(engine); // saves what the index holds
    assert_eq!(in_some_file(&folder, "walrus"), None);
}
