//! The program's wiring, shared by the command line, the evaluation harness and the
//! benchmarks: the configuration, loaded once at the entry point (defaults < file < environment
//! < flags), and the engine each command opens on the database, search index and models it
//! names. What goes wrong here is said to a person, so its errors are `anyhow`'s.

/// `println!` that returns the write's error instead of panicking: `epimem recall … | head`
/// closes the pipe early, and that is not a crash.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)?
    }};
}

/// `print!` that returns the write's error (see `outln!`).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)?
    }};
}

pub mod backup;
pub mod config;
mod hook_config;
pub mod index_progress;
mod no_index;

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use anyhow::{Context, Result, bail};
use epimem_api::{Engine, Freshness};
use epimem_api::{IndexTask, Memory};
use epimem_core::TokenCounter;
use epimem_search::{Search, TracedSearch};
use epimem_search_local::LocalSearch;
use epimem_store_postgres::{PostgresSearch, PostgresStore};
use epimem_store_sqlite::SqliteStore;

use crate::{
    config::{AppConfig, Database, SearchBackend},
    no_index::NoIndex,
};

/// Opens the configured database for reading (no embedder is loaded).
pub fn open_memory(config: &AppConfig) -> Result<Memory> {
    open_on(config, &config.database()?, false)
}

/// Opens the configured database with the configured embedder (for ingest, segmentation and
/// recall).
pub fn open_with_embedder(config: &AppConfig) -> Result<Memory> {
    open_on(config, &config.database()?, true)
}

/// Opens `database`, with the embedder and search index when the command `segments` or
/// searches; else without either (see [`without_index`]).
pub fn open_on(config: &AppConfig, database: &Database, segments: bool) -> Result<Memory> {
    if segments {
        return Ok(open_searching(config, database)?.memory);
    }
    Ok(Memory::new(without_index(config, open_store(database)?)))
}

/// [`open_on`] a SQLite file.
pub fn open_at(config: &AppConfig, path: &Path, segments: bool) -> Result<Memory> {
    open_on(config, &Database::Sqlite(path.to_owned()), segments)
}

/// What a hook opens: the store, waiting only briefly for another process's lock; no
/// embedder, no search index (a hook never searches), and tokens estimated rather than counted
/// (a hook returns within milliseconds and cannot load the tokenizer's tables).
pub fn open_for_hooks(config: &AppConfig) -> Result<Memory> {
    let busy = std::time::Duration::from_millis(config.hooks.busy_timeout_ms);
    let store = store_on(&config.database()?, Some(busy))?;
    Ok(Memory::new(without_index(config, store).with_token_counter(TokenCounter::estimate())))
}

/// Opens the configured database without a search index or embedder, with the configured
/// language model (the timeline's rollups are told by it).
pub fn open_telling(config: &AppConfig) -> Result<Memory> {
    let mut engine = without_index(config, open_store(&config.database()?)?);
    if let Some(chat) = config.chat_model()? {
        engine = engine.with_chat_model(chat);
    }
    Ok(Memory::new(engine))
}

/// The time now, as the program's clock tells it.
pub fn now() -> epimem_core::Timestamp {
    use epimem_api::Clock as _;
    epimem_api::SystemClock.now()
}

/// An engine on `store` for reads that never search (the saved index is left alone) and
/// writes that only queue: it keeps no search index at all (`NoIndex`), so none is built and
/// a search, were one asked for, is refused.
fn without_index(config: &AppConfig, store: Arc<dyn epimem_store::Store>) -> Engine {
    let worker = epimem_api::process_name();
    Engine::new(store, Box::new(NoIndex), config.engine(), config.clock(), worker)
}

/// `name` in the folder this program runs from (`epimem` and `epimem-hook` are installed
/// side by side).
pub fn beside_this(name: &str) -> std::io::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    Ok(exe.with_file_name(format!("{name}{}", std::env::consts::EXE_SUFFIX)))
}

/// Opens (creating or migrating as needed) the store `database` names.
pub fn open_store(database: &Database) -> Result<Arc<dyn epimem_store::Store>> {
    store_on(database, None)
}

/// [`open_store`], a SQLite file waiting at most `busy` for another process's lock (its
/// default when `None`).
fn store_on(
    database: &Database,
    busy: Option<std::time::Duration>,
) -> Result<Arc<dyn epimem_store::Store>> {
    Ok(match database {
        Database::Sqlite(path) => {
            let opened = match busy {
                Some(busy) => SqliteStore::open_waiting(path, busy),
                None => SqliteStore::open(path),
            };
            Arc::new(
                opened.with_context(|| format!("cannot open the database {}", path.display()))?,
            )
        }
        Database::Postgres(url) => Arc::new(connect_postgres(url, database)?),
    })
}

fn connect_postgres(url: &str, database: &Database) -> Result<PostgresStore> {
    PostgresStore::connect(url).with_context(|| format!("cannot open the database ({database})"))
}

/// The engine a long-running process answers from (`serve`, `mcp`, `bench serve`): its search
/// index kept current in the background, and a recall during a build refused after
/// `server.build_wait_seconds`.
pub fn open_serving(config: &AppConfig, database: &Database) -> Result<Memory> {
    let (engine, _) = searching(config, database)?;
    let mut engine =
        engine.with_freshness(Freshness::Background).with_build_wait(config.server.build_wait()?);
    if let Some(every) = config.search.check_every()? {
        engine = engine.with_index_checks(every);
    }
    Ok(Memory::new(engine))
}

/// Opens `database` with the configured embedder and its search index: saved beside a SQLite
/// file; for PostgreSQL, in the database (or, with `search.backend = "local"`, in memory,
/// filled from the store's change log on first use).
pub fn open_searching(config: &AppConfig, database: &Database) -> Result<Searching> {
    let (engine, search) = searching(config, database)?;
    Ok(Searching { memory: Memory::new(engine), search })
}

/// The engine [`open_searching`] puts behind its memory, and its search index.
fn searching(config: &AppConfig, database: &Database) -> Result<(Engine, SearchIndex)> {
    let worker = epimem_api::process_name();
    let engine_config = config.engine();
    let embedder = config.embedder()?;
    let fingerprint = embedder.as_ref().map(|e| e.fingerprint());
    let local = |folder: Option<&Path>| {
        let search = match folder {
            Some(folder) => LocalSearch::open(folder, &engine_config.ranking, fingerprint),
            None => LocalSearch::in_memory(&engine_config.ranking),
        };
        Arc::new(search.approximate_from(config.search.approximate_from))
    };
    let (store, search): (Arc<dyn epimem_store::Store>, SearchIndex) =
        match (database, config.search.backend) {
            (Database::Sqlite(_), SearchBackend::Database) => bail!(
                "search.backend = \"database\" needs a PostgreSQL database; {database} is a SQLite \
             file (use \"auto\" or \"local\")"
            ),
            (Database::Sqlite(path), _) => {
                (open_store(database)?, SearchIndex::Local(local(Some(&search_folder(path)))))
            }
            (Database::Postgres(_), SearchBackend::Local) => {
                (open_store(database)?, SearchIndex::Local(local(None)))
            }
            (Database::Postgres(url), _) => {
                let store = connect_postgres(url, database)?;
                let search = store
                    .search(&engine_config.ranking, fingerprint)
                    .with_context(|| format!("cannot open the search index in {database}"))?;
                (Arc::new(store), SearchIndex::Database(Arc::new(search)))
            }
        };
    let boxed: Box<dyn Search> = match &search {
        SearchIndex::Local(s) => Box::new(TracedSearch::new(s.clone(), "local")),
        SearchIndex::Database(s) => Box::new(TracedSearch::new(s.clone(), "postgresql")),
    };
    let mut engine = Engine::new(store, boxed, engine_config, config.clock(), worker)
        .with_repair_log(crate::index_progress::repair_log());
    if let Some(at) = &config.crash_at {
        engine = engine.with_crash_at(at.clone());
    }
    if let Some(embedder) = embedder {
        engine = engine.with_embedder(Box::new(epimem_embed::TracedEmbedder::new(embedder)));
    }
    if let Some(chat) = config.chat_model()? {
        engine = engine.with_chat_model(chat);
    }
    Ok((engine, search))
}

/// Brings the tenant's search index up to date before a command searches it: says on standard
/// error why when a saved one is built again (or a large one built), with a progress bar on a
/// terminal meanwhile. What was done, if anything.
pub fn load_index(memory: &Memory, tenant: &str) -> Result<Option<IndexTask>> {
    let mut progress = crate::index_progress::IndexProgress::new(tenant);
    memory
        .load_search_index(tenant, &mut |task, done, total| progress.update(task, done, total))?;
    Ok(progress.finish())
}

/// How long a server stopping waits for work left on its blocking pool (an index build) before
/// it exits: a build cut short is cut as by a crash, which the index survives, and is done again
/// on the next start.
pub const STOP_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// What the worker says on stderr: its failures, and the episodes it closed when `closes`.
pub fn worker_report(closes: bool) -> epimem_api::Report {
    Box::new(move |outcome| match outcome {
        Ok(run) if closes => eprintln!(
            "epimem: worker closed {} episode(s) of {} message(s)",
            run.episodes_closed, run.messages_closed
        ),
        Ok(_) => {}
        Err(e) => eprintln!("epimem: worker: {e}"),
    })
}

/// A memory and the search index it asks.
#[derive(Debug)]
pub struct Searching {
    pub memory: Memory,
    pub search: SearchIndex,
}

/// Where a command's search index lives.
#[derive(Debug)]
pub enum SearchIndex {
    /// The embedded index (saved beside a SQLite file, or in memory).
    Local(Arc<LocalSearch>),
    /// The index in the PostgreSQL database.
    Database(Arc<PostgresSearch>),
}

/// Where the search index of the database at `db` is saved: beside it, `<db>.search`.
pub fn search_folder(db: &Path) -> std::path::PathBuf {
    let mut name = db.file_name().unwrap_or_default().to_os_string();
    name.push(".search");
    db.with_file_name(name)
}

/// The program a hook runs and its first arguments: `epimem-hook` beside this binary, else
/// this binary and `hook`.
pub fn hook_program() -> Result<(PathBuf, &'static [&'static str])> {
    let lean = beside_this("epimem-hook").context("cannot tell where this program is")?;
    Ok(match lean.is_file() {
        true => (lean, &[]),
        false => (std::env::current_exe()?, &["hook"]),
    })
}
